//! Which cores the two sides of the bench run on. The server side (every instance, the relay,
//! and the OTLP exporter's thread) keeps the first half of the process's cores to itself; the
//! load side (the clients, the mock model and the OTLP receiver) the rest. Sharing cores, a
//! client's wake-up delays the server's next chunk and the other way round, and that
//! interleaving changes from run to run more than a few percent of the server's own cost. With
//! one core there is nothing to split: both sides share it.

use nix::sched::{CpuSet, sched_getaffinity, sched_setaffinity};
use nix::unistd::Pid;

/// The process's cores, split in two.
#[derive(Clone)]
pub struct Cores {
    server: Vec<usize>,
    load: Vec<usize>,
}

impl Cores {
    /// The cores this process may run on, split: the first half (at least one) for the server
    /// side, the rest for the load side; when there is one, or with `LOAD_CORES=shared`, both
    /// get them all.
    pub fn of_this_process() -> Self {
        let allowed = sched_getaffinity(Pid::from_raw(0)).expect("the process's cores");
        let cores: Vec<usize> = (0..CpuSet::count())
            .filter(|&cpu| allowed.is_set(cpu).unwrap_or(false))
            .collect();
        let shared = std::env::var("LOAD_CORES").is_ok_and(|chosen| chosen == "shared");
        let half = if shared { cores.len() } else { cores.len() / 2 };
        let (server, load) = cores.split_at(half.max(1).min(cores.len()));
        let load = if load.is_empty() { server } else { load };
        Self {
            server: server.to_vec(),
            load: load.to_vec(),
        }
    }

    /// The calling thread, and the threads it starts from now on, on the server side's cores.
    pub fn pin_to_server(&self) {
        pin(&self.server);
    }

    /// The calling thread, and the threads it starts from now on, on the load side's cores.
    pub fn pin_to_load(&self) {
        pin(&self.load);
    }

    /// A runtime for the server side: as many workers as it has cores, each (and every
    /// blocking thread) on them.
    pub fn server_runtime(&self) -> tokio::runtime::Runtime {
        let cores = self.clone();
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(self.server.len())
            .thread_name("bench-server")
            .on_thread_start(move || cores.pin_to_server())
            .enable_all()
            .build()
            .expect("the server side's runtime")
    }

    /// A runtime for the load side: as many workers as it has cores, on them when the
    /// calling thread is.
    pub fn load_runtime(&self) -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(self.load.len())
            .enable_all()
            .build()
            .expect("the load side's runtime")
    }

    /// The split, for the bench's heading.
    pub fn describe(&self) -> String {
        if self.server == self.load {
            format!(
                "server and load sides share cores {:?} (LOAD_CORES=shared, or one core)",
                self.server
            )
        } else {
            format!(
                "server side pinned to cores {:?}, load side (clients, mock model, OTLP receiver) to {:?}",
                self.server, self.load
            )
        }
    }
}

/// The calling thread on `cores`.
fn pin(cores: &[usize]) {
    let mut set = CpuSet::new();
    for &cpu in cores {
        set.set(cpu).expect("a core number within the set's size");
    }
    sched_setaffinity(Pid::from_raw(0), &set).expect("pinning a thread to its side's cores");
}

/// How long each side's cores have been busy since boot (user, nice, system, irq and softirq
/// time from `/proc/stat`, whoever ran), in ms; to the clock tick (10 ms), so read over a
/// whole run.
#[derive(Clone, Copy, Default)]
pub struct Busy {
    /// The server side's cores.
    pub server_ms: f64,
    /// The load side's cores.
    pub load_ms: f64,
}

impl Cores {
    /// How long each side's cores have been busy so far.
    pub fn busy(&self) -> Busy {
        let ticks_per_second = nix::unistd::sysconf(nix::unistd::SysconfVar::CLK_TCK)
            .ok()
            .flatten()
            .unwrap_or(100) as f64;
        let stat = std::fs::read_to_string("/proc/stat").unwrap_or_default();
        let busy_ms = |cores: &[usize]| -> f64 {
            let ticks: u64 = stat
                .lines()
                .filter_map(|line| {
                    let mut fields = line.split_whitespace();
                    let cpu: usize = fields.next()?.strip_prefix("cpu")?.parse().ok()?;
                    let times: Vec<u64> = fields.filter_map(|f| f.parse().ok()).collect();
                    // user nice system idle iowait irq softirq: all but idle and iowait.
                    let busy: u64 = [0, 1, 2, 5, 6].iter().filter_map(|&at| times.get(at)).sum();
                    cores.contains(&cpu).then_some(busy)
                })
                .sum();
            ticks as f64 * 1000.0 / ticks_per_second
        };
        Busy {
            server_ms: busy_ms(&self.server),
            load_ms: busy_ms(&self.load),
        }
    }

    /// Whether the two sides have cores of their own.
    pub fn split(&self) -> bool {
        self.server != self.load
    }

    /// How many cores each side has: server, load.
    pub fn counts(&self) -> (usize, usize) {
        (self.server.len(), self.load.len())
    }
}

/// Where the bench runs: the cores split, and the server side's runtime.
pub struct Sides {
    /// The cores of each side.
    pub cores: Cores,
    /// The server side's runtime.
    pub server: tokio::runtime::Handle,
}
