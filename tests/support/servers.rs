//! Throwaway PostgreSQL, Redis and nginx servers for the tests, from Debian's packages
//! (`postgresql-15`, `redis-server`, `nginx`, which ./scripts/test installs): each listens on a free port
//! of 127.0.0.1 with its files in a temporary folder (and a system keyring on a D-Bus bus of
//! its own, [`SecretService`]), is stopped when dropped, and dies with the
//! thread that started it (a parent-death signal: start it on the test's own thread), so a
//! failed or killed test leaves no server behind.
//!
//! PostgreSQL refuses to run as root: under root its programs run as the `postgres` user the
//! package creates. The cluster is made once per test process (`initdb` without syncing, about
//! a second) and runs with `fsync=off`; [`Postgres::database`] makes a database per test.

use nix::sys::signal::{Signal, kill};
use nix::unistd::{Pid, Uid, User};
use std::net::TcpListener;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

/// How long a server may take to start answering.
const START_TIMEOUT: Duration = Duration::from_secs(30);

/// A port of 127.0.0.1 that nothing listens on now.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Whether something accepts connections on `port` of 127.0.0.1.
fn answers(port: u16) -> bool {
    std::net::TcpStream::connect_timeout(&([127, 0, 0, 1], port).into(), Duration::from_millis(200))
        .is_ok()
}

/// Waits until `ready` holds, failing the test with the server's log after [`START_TIMEOUT`].
fn wait_until(what: &str, log: &Path, child: &mut Child, ready: impl Fn() -> bool) {
    let deadline = Instant::now() + START_TIMEOUT;
    while !ready() {
        if let Ok(Some(status)) = child.try_wait() {
            panic!(
                "{what} exited ({status}) before it answered:\n{}",
                std::fs::read_to_string(log).unwrap_or_default()
            );
        }
        assert!(
            Instant::now() < deadline,
            "{what} did not answer within {START_TIMEOUT:?}:\n{}",
            std::fs::read_to_string(log).unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A server's running process, stopped with its own shutdown signal (and killed when it
/// lingers) when stopped or dropped.
struct ServerProcess {
    child: Option<Child>,
    shutdown: Signal,
}

impl ServerProcess {
    fn none(shutdown: Signal) -> Self {
        Self {
            child: None,
            shutdown,
        }
    }

    fn stop(&mut self) {
        let Some(mut child) = self.child.take() else {
            return;
        };
        let _ = kill(Pid::from_raw(child.id() as i32), self.shutdown);
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = child.kill();
        let _ = child.wait();
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        self.stop();
    }
}

/// `command` (server `what`, logging to `log`) started, tied to this thread, once it answers on
/// `port`; stopped with SIGTERM.
fn started(mut command: Command, what: &str, log: &Path, port: u16) -> ServerProcess {
    tied_to_this_process(&mut command, None, Signal::SIGTERM);
    let mut child = command.spawn().unwrap_or_else(|e| panic!("no {what}: {e}"));
    wait_until(what, log, &mut child, || answers(port));
    ServerProcess {
        child: Some(child),
        shutdown: Signal::SIGTERM,
    }
}

/// `command` made to die with the thread that starts it (and, under root, to run as `user`).
#[allow(unsafe_code)]
fn tied_to_this_process(command: &mut Command, user: Option<&User>, on_parent_death: Signal) {
    let ids = user.map(|user| (user.uid, user.gid));
    // SAFETY: only async-signal-safe calls between fork and exec.
    unsafe {
        command.pre_exec(move || {
            if let Some((uid, gid)) = ids {
                nix::unistd::setgroups(&[])?;
                nix::unistd::setgid(gid)?;
                nix::unistd::setuid(uid)?;
            }
            // Set after the user changes, which clears it.
            nix::sys::prctl::set_pdeathsig(on_parent_death)?;
            Ok(())
        });
    }
}

/// A PostgreSQL server of its own.
pub struct Postgres {
    dir: tempfile::TempDir,
    bin: PathBuf,
    user: Option<User>,
    port: u16,
    process: ServerProcess,
    databases: AtomicU32,
}

/// The user the cluster's superuser role is named after.
const ROLE: &str = "agentry";

impl Postgres {
    /// Makes a cluster and starts its server.
    pub fn start() -> Self {
        let bin = postgres_bin();
        let user = Uid::effective().is_root().then(|| {
            User::from_name("postgres")
                .unwrap()
                .expect("no `postgres` user")
        });
        let dir = tempfile::tempdir().unwrap();
        if let Some(user) = &user {
            nix::unistd::chown(dir.path(), Some(user.uid), Some(user.gid)).unwrap();
        }
        let data = dir.path().join("data");
        let mut initdb = Command::new(bin.join("initdb"));
        initdb
            .arg("--pgdata")
            .arg(&data)
            .args(["--no-sync", "--auth=trust", "--encoding=UTF8", "--locale=C"])
            .args(["--username", ROLE, "--no-instructions"])
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        tied_to_this_process(&mut initdb, user.as_ref(), Signal::SIGKILL);
        let made = initdb.output().unwrap();
        assert!(
            made.status.success(),
            "initdb failed: {}",
            String::from_utf8_lossy(&made.stderr)
        );
        let mut server = Self {
            dir,
            bin,
            user,
            port: 0,
            process: ServerProcess::none(Signal::SIGINT),
            databases: AtomicU32::new(0),
        };
        server.run();
        server
    }

    /// Starts the server on a free port (again, after [`Postgres::stop`], on the same one).
    fn run(&mut self) {
        if self.port == 0 {
            self.port = free_port();
        }
        let log = self.dir.path().join("server.log");
        let mut command = Command::new(self.bin.join("postgres"));
        command
            .arg("-D")
            .arg(self.dir.path().join("data"))
            .args(["-p", &self.port.to_string(), "-k"])
            .arg(self.dir.path())
            .args(["-c", "listen_addresses=127.0.0.1", "-c", "fsync=off"])
            .args(["-c", "synchronous_commit=off", "-c", "full_page_writes=off"])
            .args(["-c", "max_connections=200"])
            // Statement counts, for the load bench.
            .args(["-c", "shared_preload_libraries=pg_stat_statements"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap());
        if let Some(user) = &self.user {
            nix::unistd::chown(&log, Some(user.uid), Some(user.gid)).unwrap();
        }
        // Its fast shutdown: the server ends every session and stops.
        tied_to_this_process(&mut command, self.user.as_ref(), Signal::SIGINT);
        let mut child = command.spawn().unwrap();
        let port = self.port;
        let ready = || {
            answers(port)
                && Command::new(self.bin.join("pg_isready"))
                    .args(["-h", "127.0.0.1", "-p", &port.to_string(), "-q"])
                    .status()
                    .is_ok_and(|s| s.success())
        };
        wait_until("postgres", &log, &mut child, ready);
        self.process.child = Some(child);
    }

    /// Stops the server (a fast shutdown: every session ends).
    pub fn stop(&mut self) {
        self.process.stop();
    }

    /// Starts the stopped server again, on its port.
    pub fn restart(&mut self) {
        self.stop();
        self.run();
    }

    /// Its port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The URL of database `name`.
    pub fn url(&self, name: &str) -> String {
        format!("postgres://{ROLE}@127.0.0.1:{}/{name}", self.port)
    }

    /// A new, empty database; its URL.
    pub fn database(&self) -> String {
        let name = format!(
            "test_{}",
            self.databases.fetch_add(1, Ordering::Relaxed) + 1
        );
        self.sql("postgres", &format!("CREATE DATABASE {name}"));
        self.url(&name)
    }

    /// Runs `sql` in database `name` with `psql`, failing the test when it fails; what it
    /// printed (unaligned, tuples only).
    pub fn sql(&self, name: &str, sql: &str) -> String {
        let out = Command::new(self.bin.join("psql"))
            .args(["-h", "127.0.0.1", "-p", &self.port.to_string(), "-U", ROLE])
            .args(["-d", name, "-v", "ON_ERROR_STOP=1", "-At", "-c", sql])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "psql `{sql}`: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }
}

/// The folder of PostgreSQL's programs: `$AGENTRY_TEST_PG_BIN`, else the newest of Debian's
/// `/usr/lib/postgresql/N/bin`.
fn postgres_bin() -> PathBuf {
    if let Some(bin) = std::env::var_os("AGENTRY_TEST_PG_BIN") {
        return PathBuf::from(bin);
    }
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .filter_map(|entry| {
            let entry = entry.ok()?;
            let version = entry.file_name().to_str()?.parse().ok()?;
            let bin = entry.path().join("bin");
            bin.join("postgres").exists().then_some((version, bin))
        })
        .collect();
    versions.sort();
    versions.pop().map(|(_, bin)| bin).expect(
        "no PostgreSQL server in /usr/lib/postgresql (apt-get install postgresql-15; \
         ./scripts/test does)",
    )
}

/// A Redis server of its own, keeping nothing on disk.
pub struct Redis {
    dir: tempfile::TempDir,
    port: u16,
    process: ServerProcess,
}

impl Redis {
    /// Starts a server on a free port.
    pub fn start() -> Self {
        let mut server = Self {
            dir: tempfile::tempdir().unwrap(),
            port: free_port(),
            process: ServerProcess::none(Signal::SIGTERM),
        };
        server.run();
        server
    }

    fn run(&mut self) {
        let log = self.dir.path().join("server.log");
        let mut command = Command::new("redis-server");
        command
            .args(["--port", &self.port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no", "--daemonize", "no"])
            .arg("--dir")
            .arg(self.dir.path())
            .args(["--logfile"])
            .arg(&log)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        self.process = started(
            command,
            "redis-server (apt-get install redis-server; ./scripts/test does)",
            &log,
            self.port,
        );
    }

    /// Stops the server.
    pub fn stop(&mut self) {
        self.process.stop();
    }

    /// Starts the stopped server again, on its port (empty: it keeps nothing on disk).
    pub fn restart(&mut self) {
        self.stop();
        self.run();
    }

    /// Its port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Its URL.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }
}

/// An nginx of its own in front of `upstreams` (`127.0.0.1:PORT` each), round-robin, with no
/// stickiness, passing WebSocket upgrades on, as the README's layout has it. One process
/// (`master_process off`), so that it dies with the test.
pub struct Nginx {
    dir: tempfile::TempDir,
    port: u16,
    _process: ServerProcess,
}

impl Nginx {
    /// Starts nginx on a free port in front of `upstreams`.
    pub fn start(upstreams: &[&str]) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let port = free_port();
        let folder = dir.path().display().to_string();
        let servers: String = upstreams
            .iter()
            .map(|upstream| format!("        server {upstream};\n"))
            .collect();
        let config = format!(
            "daemon off;
master_process off;
pid {folder}/nginx.pid;
error_log {folder}/error.log info;
events {{ worker_connections 512; }}
http {{
    log_format upstreams '$request_method $uri $status $upstream_addr';
    access_log {folder}/access.log upstreams;
    client_body_temp_path {folder}/body;
    proxy_temp_path {folder}/proxy;
    fastcgi_temp_path {folder}/fastcgi;
    uwsgi_temp_path {folder}/uwsgi;
    scgi_temp_path {folder}/scgi;
    map $http_upgrade $connection_upgrade {{
        default upgrade;
        '' close;
    }}
    upstream agentry {{
{servers}    }}
    server {{
        listen 127.0.0.1:{port};
        location / {{
            proxy_pass http://agentry;
            proxy_http_version 1.1;
            proxy_set_header Upgrade $http_upgrade;
            proxy_set_header Connection $connection_upgrade;
            proxy_set_header Host $host;
            proxy_buffering off;
            proxy_read_timeout 1h;
        }}
    }}
}}
"
        );
        let file = dir.path().join("nginx.conf");
        std::fs::write(&file, config).unwrap();
        // What nginx says before it opens its error log (a configuration it refuses) too.
        let log = dir.path().join("error.log");
        let early = std::fs::File::create(&log).unwrap();
        let mut command = Command::new(nginx());
        command
            .arg("-c")
            .arg(&file)
            .arg("-p")
            .arg(dir.path())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(early);
        Self {
            _process: started(command, "nginx", &log, port),
            dir,
            port,
        }
    }

    /// Its base URL (`http://127.0.0.1:PORT`).
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// The upstream each request went to, as the access log has it (`METHOD URI STATUS
    /// UPSTREAM` a line).
    pub fn access_log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("access.log")).unwrap_or_default()
    }
}

/// A Prometheus server of its own, scraping `targets` (`127.0.0.1:PORT` each) every second.
pub struct Prometheus {
    _dir: tempfile::TempDir,
    port: u16,
    _process: ServerProcess,
}

impl Prometheus {
    /// Starts Prometheus on a free port, scraping `targets`.
    pub fn start(targets: &[&str]) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let port = free_port();
        let targets: Vec<String> = targets.iter().map(|t| format!("\"{t}\"")).collect();
        let config = format!(
            "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n\
             scrape_configs:\n  - job_name: agentry\n    static_configs:\n      - targets: [{}]\n",
            targets.join(", ")
        );
        let file = dir.path().join("prometheus.yml");
        std::fs::write(&file, config).unwrap();
        let log = dir.path().join("prometheus.log");
        let mut command = Command::new("prometheus");
        command
            .arg(format!("--config.file={}", file.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.path().join("data").display()
            ))
            .arg(format!("--web.listen-address=127.0.0.1:{port}"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap());
        Self {
            _process: started(
                command,
                "prometheus (apt-get install prometheus; ./scripts/test does)",
                &log,
                port,
            ),
            _dir: dir,
            port,
        }
    }

    /// The result of the instant query `expression` (`data.result` of its HTTP API).
    pub fn query(&self, expression: &str) -> serde_json::Value {
        let (status, body) = crate::http::call(
            "GET",
            &format!(
                "http://127.0.0.1:{}/api/v1/query?query={expression}",
                self.port
            ),
            None,
            None,
        );
        assert_eq!(status, 200, "{body}");
        body["data"]["result"].clone()
    }
}

/// Debian's nginx (package `nginx`, which ./scripts/test installs).
fn nginx() -> PathBuf {
    ["/usr/sbin/nginx", "/usr/bin/nginx"]
        .into_iter()
        .map(PathBuf::from)
        .find(|path| path.exists())
        .expect("no nginx (apt-get install nginx; ./scripts/test does)")
}

/// A throwaway system keyring: a D-Bus session bus of its own (`dbus-daemon`) with
/// gnome-keyring's Secret Service on it, its `login` keyring made and unlocked with a password
/// of the test's, its files in a temporary folder; both stopped when dropped. A program given
/// its [`address`](SecretService::address) keeps its secrets there.
pub struct SecretService {
    // Dropped in this order: the keyring, its bus, then their folder.
    _keyring: ServerProcess,
    _bus: ServerProcess,
    address: String,
    dir: tempfile::TempDir,
}

impl SecretService {
    /// Starts the bus and the keyring, and waits until the keyring answers on the bus.
    pub fn start() -> Self {
        let dir = tempfile::tempdir().unwrap();
        for folder in ["home", "data", "runtime"] {
            std::fs::create_dir(dir.path().join(folder)).unwrap();
        }
        let socket = dir.path().join("runtime/bus");
        let address = format!("unix:path={}", socket.display());
        let log = dir.path().join("bus.log");
        let mut bus = Command::new("dbus-daemon");
        bus.args(["--session", "--nofork", "--nopidfile"])
            .arg(format!("--address={address}"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap());
        tied_to_this_process(&mut bus, None, Signal::SIGTERM);
        let mut bus = bus
            .spawn()
            .expect("dbus-daemon (apt-get install dbus-daemon; ./scripts/test does)");
        wait_until("dbus-daemon", &log, &mut bus, || socket.exists());
        let mut service = Self {
            address,
            _bus: ServerProcess {
                child: Some(bus),
                shutdown: Signal::SIGTERM,
            },
            _keyring: ServerProcess::none(Signal::SIGTERM),
            dir,
        };
        service._keyring = service.start_keyring();
        service
    }

    /// gnome-keyring's secrets daemon on the bus, its `login` keyring unlocked with the
    /// password it reads on its input.
    fn start_keyring(&self) -> ServerProcess {
        use std::io::Write;
        let log = self.dir.path().join("keyring.log");
        let output = std::fs::File::create(&log).unwrap();
        let mut keyring = Command::new("gnome-keyring-daemon");
        keyring
            .args(["--foreground", "--components=secrets", "--unlock"])
            .env_clear()
            .envs(self.env())
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .stdin(Stdio::piped())
            .stdout(output.try_clone().unwrap())
            .stderr(output);
        tied_to_this_process(&mut keyring, None, Signal::SIGTERM);
        let mut child = keyring
            .spawn()
            .expect("gnome-keyring-daemon (apt-get install gnome-keyring; ./scripts/test does)");
        let mut password = child.stdin.take().unwrap();
        password.write_all(b"throwaway").unwrap();
        drop(password);
        wait_until("gnome-keyring-daemon", &log, &mut child, || {
            self.bus_has("org.freedesktop.secrets")
        });
        ServerProcess {
            child: Some(child),
            shutdown: Signal::SIGTERM,
        }
    }

    /// Whether `name` is owned on the bus.
    fn bus_has(&self, name: &str) -> bool {
        Command::new("dbus-send")
            .args(["--session", "--print-reply", "--dest=org.freedesktop.DBus"])
            .args(["/org/freedesktop/DBus", "org.freedesktop.DBus.NameHasOwner"])
            .arg(format!("string:{name}"))
            .env("DBUS_SESSION_BUS_ADDRESS", &self.address)
            .output()
            .is_ok_and(|out| String::from_utf8_lossy(&out.stdout).contains("boolean true"))
    }

    /// The address of its bus: a program with it as `DBUS_SESSION_BUS_ADDRESS` keeps its
    /// secrets in this keyring.
    pub fn address(&self) -> &str {
        &self.address
    }

    /// The daemon's environment: its bus, and folders of its own.
    fn env(&self) -> Vec<(&'static str, String)> {
        let folder = |name: &str| self.dir.path().join(name).display().to_string();
        vec![
            ("DBUS_SESSION_BUS_ADDRESS", self.address.clone()),
            ("HOME", folder("home")),
            ("XDG_DATA_HOME", folder("data")),
            ("XDG_RUNTIME_DIR", folder("runtime")),
        ]
    }

    /// The secret kept under these attributes (`secret-tool lookup`), if there is one.
    pub fn lookup(&self, attributes: &[(&str, &str)]) -> Option<String> {
        let out = Command::new("secret-tool")
            .arg("lookup")
            .args(attributes.iter().flat_map(|(name, value)| [*name, *value]))
            .env("DBUS_SESSION_BUS_ADDRESS", &self.address)
            .stdin(Stdio::null())
            .output()
            .expect("secret-tool (apt-get install libsecret-tools; ./scripts/test does)");
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_throwaway_postgres_makes_databases_and_stops_when_dropped() {
        let mut server = Postgres::start();
        let url = server.database();
        let name = url.rsplit('/').next().unwrap().to_owned();
        assert_eq!(server.sql(&name, "SELECT 40 + 2").trim(), "42");
        server.restart();
        assert_eq!(server.sql(&name, "SELECT 1").trim(), "1");
        let port = server.port();
        drop(server);
        assert!(!answers(port), "the server still answers on {port}");
    }

    #[test]
    fn a_throwaway_redis_starts_again_empty_and_stops_when_dropped() {
        let mut server = Redis::start();
        let port = server.port();
        assert!(answers(port));
        server.restart();
        assert!(answers(port));
        drop(server);
        assert!(!answers(port), "the server still answers on {port}");
    }
}
