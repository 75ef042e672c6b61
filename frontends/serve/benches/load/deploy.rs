//! The deployments the load bench compares: one instance on SQLite with in-process fan-out,
//! and one to three instances sharing a PostgreSQL store and a Redis broker (throwaway servers
//! of Debian's on loopback), each instance an `agentry serve` router of its own in this process.

use agentry::agent::Agent;
use agentry::permission::PermissionPolicy;
use agentry::provider::SimpleProvider;
use agentry::session::SessionStore;
use agentry::tool::{ToolError, ToolKind, tool_fn};
use agentry_admission::Admission;
use agentry_fanout::{Fanout, LocalFanout};
use agentry_models::openai::{OpenAiApi, OpenAiModel, OpenAiSettings};
use agentry_postgres::PostgresStore;
use agentry_redis::RedisFanout;
use agentry_serve::ServeSettings;
use agentry_serve::live::{Limits, SessionDefaults};
use agentry_sqlite::SqliteStore;
use agentry_tests::servers::{Postgres, Redis};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

/// Where chats run and where their clients follow them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// (a) One instance, SQLite, in-process fan-out: the baseline.
    Local,
    /// (b) One instance on PostgreSQL and Redis.
    Shared,
    /// (c) Two instances, each chat's client on the instance running it.
    OnOwner,
    /// (d) Two instances, each chat's client on the other instance.
    OnOther,
    /// (e) Three instances, each chat's client on the next one.
    Three,
    /// (f) (a) observed: its chats counted in the metrics, and traced to an OTLP receiver.
    Observed,
}

impl Layout {
    /// Every layout, in the order the bench reports them.
    pub const ALL: [Layout; 6] = [
        Layout::Local,
        Layout::Shared,
        Layout::OnOwner,
        Layout::OnOther,
        Layout::Three,
        Layout::Observed,
    ];

    /// Its letter and what it is.
    pub fn name(self) -> &'static str {
        match self {
            Layout::Local => "(a) 1 instance, SQLite, in-process",
            Layout::Shared => "(b) 1 instance, PostgreSQL + Redis",
            Layout::OnOwner => "(c) 2 instances, client on the owner",
            Layout::OnOther => "(d) 2 instances, client on the other",
            Layout::Three => "(e) 3 instances, client on the next",
            Layout::Observed => "(f) (a) with chat metrics, and traces to an OTLP receiver",
        }
    }

    /// The letter alone (`LOAD_LAYOUTS=a,d` chooses).
    pub fn letter(self) -> char {
        self.name().chars().nth(1).unwrap_or('?')
    }

    /// How many instances.
    pub fn instances(self) -> usize {
        match self {
            Layout::Local | Layout::Shared | Layout::Observed => 1,
            Layout::OnOwner | Layout::OnOther => 2,
            Layout::Three => 3,
        }
    }

    /// Whether the instances share PostgreSQL and Redis.
    pub fn shared(self) -> bool {
        !matches!(self, Layout::Local | Layout::Observed)
    }

    /// The instance running chat `i`.
    pub fn owner(self, i: usize) -> usize {
        i % self.instances()
    }

    /// The instance chat `i`'s client follows it on.
    pub fn follower(self, i: usize) -> usize {
        match self {
            Layout::Local | Layout::Shared | Layout::OnOwner | Layout::Observed => self.owner(i),
            Layout::OnOther | Layout::Three => (self.owner(i) + 1) % self.instances(),
        }
    }
}

/// The PostgreSQL and Redis servers shared layouts use, started once per run of the bench.
pub struct Backing {
    pub postgres: Postgres,
    pub redis: Redis,
}

impl Backing {
    pub fn start() -> Self {
        Self {
            postgres: Postgres::start(),
            redis: Redis::start(),
        }
    }

    /// PostgreSQL's work in `database` since the count started: statements (besides `BEGIN`
    /// and `COMMIT`; a call of one of agentry's functions is one), and of them those in
    /// explicit transactions (`COMMIT`s; reads of a whole session).
    pub fn postgres_work(&self, database: &str) -> (u64, u64) {
        let counts = self.postgres.sql(
            database,
            "SELECT COALESCE(sum(calls) FILTER (WHERE query NOT IN ('BEGIN', 'COMMIT', 'ROLLBACK')), 0),
                    COALESCE(sum(calls) FILTER (WHERE query = 'COMMIT'), 0)
             FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid
             WHERE d.datname = current_database() AND s.query NOT LIKE '%pg_stat%'",
        );
        let mut numbers = counts.trim().split('|').map(|n| n.parse().unwrap_or(0));
        let mut next = || numbers.next().unwrap_or(0);
        (next(), next())
    }

    /// Starts counting statements in `database` afresh.
    pub fn reset_statements(&self, database: &str) {
        self.postgres.sql(
            database,
            "CREATE EXTENSION IF NOT EXISTS pg_stat_statements; SELECT pg_stat_statements_reset()",
        );
    }

    /// The commands Redis has processed so far.
    pub fn redis_commands(&self) -> u64 {
        let out = std::process::Command::new("redis-cli")
            .args(["-h", "127.0.0.1", "-p", &self.redis.port().to_string()])
            .args(["INFO", "stats"])
            .output()
            .expect("redis-cli (package redis-tools, with redis-server)");
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .find_map(|line| line.strip_prefix("total_commands_processed:"))
            .and_then(|n| n.trim().parse().ok())
            .unwrap_or(0)
    }
}

/// A running deployment: its instances' addresses, and what they keep.
pub struct Deployment {
    pub addresses: Vec<SocketAddr>,
    instances: Vec<Instance>,
    /// The PostgreSQL database, for a shared layout.
    pub database: Option<String>,
    _folder: tempfile::TempDir,
}

/// A fresh database on the shared PostgreSQL, and the shared Redis: where a shared layout's
/// instances keep their sessions and fan their events out.
pub struct Shared {
    database_url: String,
    redis_url: String,
}

impl Backing {
    /// A fresh database and the Redis, for one deployment.
    pub fn fresh(&self) -> Shared {
        Shared {
            database_url: self.postgres.database(),
            redis_url: self.redis.url(),
        }
    }
}

/// Starts `layout`'s instances against the mock model at `model_url`, each chat's claim on
/// its session holding for `lease`, on the current runtime (what they spawn runs there).
pub async fn deploy(
    layout: Layout,
    model_url: String,
    shared: Option<Shared>,
    lease: Duration,
) -> Deployment {
    let folder = tempfile::tempdir().unwrap();
    assert_eq!(
        layout.shared(),
        shared.is_some(),
        "a shared layout needs PostgreSQL and Redis, and only it"
    );
    let (mut addresses, mut instances) = (Vec::new(), Vec::new());
    for _ in 0..layout.instances() {
        let (store, fanout): (Arc<dyn SessionStore>, Arc<dyn Fanout>) = match &shared {
            Some(shared) => (
                Arc::new(PostgresStore::open(&shared.database_url).unwrap()),
                Arc::new(RedisFanout::connect(&shared.redis_url).await.unwrap()),
            ),
            None => (
                Arc::new(SqliteStore::open(folder.path().join("sessions.db")).unwrap()),
                Arc::new(LocalFanout::default()),
            ),
        };
        let observed = layout == Layout::Observed && super::observe::observes("metrics");
        let instance =
            start_instance(&model_url, store, fanout, folder.path(), lease, observed).await;
        addresses.push(instance.address);
        instances.push(instance);
    }
    let database = shared.map(|shared| {
        let name = shared.database_url.rsplit('/').next().unwrap_or_default();
        name.to_owned()
    });
    Deployment {
        addresses,
        instances,
        database,
        _folder: folder,
    }
}

impl Deployment {
    /// Stops every instance once its connections have ended, freeing what it held (its
    /// sockets, its model client's connections) for the next run.
    pub async fn stop(self) {
        for instance in self.instances {
            instance.stop().await;
        }
    }
}

/// A running instance.
pub struct Instance {
    /// Where it listens.
    pub address: SocketAddr,
    stop: tokio::sync::oneshot::Sender<()>,
    serving: tokio::task::JoinHandle<()>,
}

impl Instance {
    /// Serves `router` on `listener` (without Nagle's delay), on the current runtime.
    pub fn serve(listener: tokio::net::TcpListener, router: axum::Router) -> Self {
        let address = listener.local_addr().unwrap();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let serving = tokio::spawn(async move {
            let listener =
                agentry_serve::GuardedListener::new(listener, agentry_serve::Timeouts::default());
            axum::serve(listener, router)
                .with_graceful_shutdown(async move {
                    let _ = stopped.await;
                })
                .await
                .unwrap();
        });
        Instance {
            address,
            stop,
            serving,
        }
    }

    /// Stops it, waiting (at most ten seconds) for its connections to end.
    pub async fn stop(self) {
        let _ = self.stop.send(());
        let _ = tokio::time::timeout(Duration::from_secs(10), self.serving).await;
    }
}

/// One `agentry serve` instance on a free port of 127.0.0.1, on the current runtime; its chats
/// counted in the metrics when `chat_metrics`.
pub async fn start_instance(
    model_url: &str,
    store: Arc<dyn SessionStore>,
    fanout: Arc<dyn Fanout>,
    cwd: &std::path::Path,
    lease: Duration,
    chat_metrics: bool,
) -> Instance {
    let model = OpenAiModel::new(OpenAiSettings {
        display_name: "openai/gpt-4.1".to_owned(),
        model: "gpt-4.1".to_owned(),
        base_url: format!("{model_url}/v1"),
        api_key: Some("sk-bench".into()),
        api: OpenAiApi::ChatCompletions,
        context_window: None,
        images: false,
        max_output_tokens: None,
        reasoning: None,
        http: Default::default(),
    })
    .unwrap();
    let agent = Agent::builder(Arc::new(model))
        .provider(SimpleProvider::new("bench", "").with_tool(tool_fn(
            "Echo",
            "Echoes.",
            ToolKind::Read,
            |input: super::Text, _| async move { Ok::<_, ToolError>(input.text) },
        )))
        .store(store)
        .build()
        .unwrap();
    let settings = ServeSettings {
        defaults: SessionDefaults {
            cwd: cwd.to_path_buf(),
            policy: PermissionPolicy::default(),
            max_message_bytes: 1 << 20,
            lease,
            limits: Limits::default(),
            chat_metrics,
        },
        admission: Admission::new(None, "127.0.0.1:0".parse().unwrap(), &[], &[]),
        models: None,
    };
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    Instance::serve(
        listener,
        agentry_serve::router_with_fanout(agent, settings, fanout),
    )
}
