//! A customer-support agent of a team's own, on the framework: two tools of its own (an order
//! lookup and a refund request, against in-memory data), its own identity, its own data folder
//! — and nothing of the stock `agentry` agent: no base prompt of its, no `AGENTS.md` or
//! `CLAUDE.md` read from wherever it runs.
//!
//! ```text
//! cargo run -p agentry-examples --example support_bot -- openai/gpt-4.1-mini "Where is order 1042?"
//! ```
//!
//! The model is given as the `agentry` binary takes it (`PROVIDER/MODEL`, keys and base URLs
//! such as `OPENAI_BASE_URL` from the environment). Sessions are kept in `$SUPPORT_BOT_DATA`
//! (else `~/.local/share/support-bot`).

use agentry::permission::{PermissionMode, PermissionPolicy, RuleAction};
use agentry::prelude::*;
use agentry_sqlite::SqliteStore;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

/// Who the bot is and how it works.
const IDENTITY: &str = "You are the support assistant of Northwind Coffee's web shop. Answer \
customers' questions about their orders: look an order up before you say anything about it, and \
request a refund only when the customer asks for one and the order was delivered damaged or not \
at all. Be brief and friendly.";

/// An order as the shop keeps it.
#[derive(Debug, Clone)]
struct Order {
    id: u32,
    item: &'static str,
    status: &'static str,
    refund_requested: bool,
}

/// The shop's orders, in memory.
#[derive(Clone)]
struct Orders(Arc<Mutex<Vec<Order>>>);

impl Orders {
    fn sample() -> Self {
        let order = |id, item, status| Order {
            id,
            item,
            status,
            refund_requested: false,
        };
        Self(Arc::new(Mutex::new(vec![
            order(1041, "Ethiopia Yirgacheffe, 500 g", "delivered"),
            order(1042, "Hand grinder", "shipped, arriving Thursday"),
            order(1043, "Espresso cups (4)", "delivered, reported broken"),
        ])))
    }

    fn with<T>(&self, id: u32, f: impl FnOnce(&mut Order) -> T) -> Result<T, ToolError> {
        let mut orders = self
            .0
            .lock()
            .map_err(|_| ToolError::failed("orders unavailable"))?;
        match orders.iter_mut().find(|order| order.id == id) {
            Some(order) => Ok(f(order)),
            None => Err(ToolError::failed(format!("there is no order {id}"))),
        }
    }
}

/// Looks an order up.
struct LookupOrder(Orders);

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct LookupInput {
    /// The order's number.
    order_id: u32,
}

impl Tool for LookupOrder {
    type Input = LookupInput;
    type Output = String;
    fn name(&self) -> &str {
        "LookupOrder"
    }
    fn description(&self) -> String {
        "Looks up an order by its number: what was ordered and where it is.".into()
    }
    fn kind(&self) -> ToolKind {
        ToolKind::Read
    }
    async fn call(&self, input: LookupInput, _: ToolContext) -> Result<String, ToolError> {
        self.0.with(input.order_id, |order| {
            format!(
                "Order {}: {} — {}{}",
                order.id,
                order.item,
                order.status,
                if order.refund_requested {
                    " (refund requested)"
                } else {
                    ""
                }
            )
        })
    }
}

/// Requests a refund for an order.
struct RequestRefund(Orders);

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct RefundInput {
    /// The order's number.
    order_id: u32,
    /// Why, in the customer's words.
    reason: String,
}

impl Tool for RequestRefund {
    type Input = RefundInput;
    type Output = String;
    fn name(&self) -> &str {
        "RequestRefund"
    }
    fn description(&self) -> String {
        "Requests a refund for an order; the shop's staff decide on it within two days.".into()
    }
    fn kind(&self) -> ToolKind {
        ToolKind::Other
    }
    async fn call(&self, input: RefundInput, _: ToolContext) -> Result<String, ToolError> {
        self.0.with(input.order_id, |order| {
            order.refund_requested = true;
            format!(
                "Refund requested for order {} ({}).",
                order.id, input.reason
            )
        })
    }
}

/// The bot's own data folder.
fn data_folder() -> PathBuf {
    match std::env::var_os("SUPPORT_BOT_DATA") {
        Some(folder) => PathBuf::from(folder),
        None => PathBuf::from(std::env::var_os("HOME").unwrap_or_default())
            .join(".local/share/support-bot"),
    }
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let (Some(model_spec), Some(question)) = (args.next(), args.next()) else {
        anyhow::bail!("usage: support_bot MODEL_SPEC QUESTION");
    };
    let data = data_folder();
    std::fs::create_dir_all(&data)?;
    let orders = Orders::sample();
    let tools = SimpleProvider::new("shop", "The shop's orders.")
        .with_tool(LookupOrder(orders.clone()))
        .with_tool(RequestRefund(orders));
    let agent = Agent::builder(agentry_models::open(&model_spec)?)
        .store(Arc::new(SqliteStore::open(data.join("sessions.db"))?))
        .provider(tools)
        .config(AgentConfig {
            base_prompt: IDENTITY.to_owned(),
            ..AgentConfig::default()
        })
        .build()?;
    let mut options = SessionOptions::new(std::env::current_dir()?);
    // The bot's own tools run without asking: there is no one to ask but the customer.
    options.policy = PermissionPolicy::with_rules(
        PermissionMode::Default,
        &[(RuleAction::Allow, "RequestRefund")],
    )?;
    let mut session = agent.new_session(options)?;
    let io = ChatIo::new(|_: AgentEvent| {});
    let prompt = vec![ContentBlock::text(question)];
    let summary = session
        .prompt_with(prompt, &ChatOptions::default(), &io)
        .await?;
    println!("{}", summary.answer());
    Ok(())
}
