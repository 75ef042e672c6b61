//! # agentry-models
//!
//! The HTTP clients of hosted models, as [`Model`](agentry::model::Model)s: OpenAI's Chat
//! Completions and Responses APIs ([`openai`]), Anthropic's Messages API ([`anthropic`]) and the
//! servers compatible with them, over one HTTP layer with timeouts and retries ([`http`]) and
//! the decoders of their streams ([`wire`]); the [`catalog`] opens them by the name users write
//! (`PROVIDER/MODEL`).
//!
//! Each cloud is a feature, so that a team that needs none compiles none: `bedrock` (Amazon
//! Bedrock: its client in `bedrock`, SigV4 signing and AWS's credential chain in `aws`, AWS's
//! binary event stream and Bedrock's streams in `wire::eventstream` and `wire::bedrock`) and
//! `gemini` (Google's Gemini API: its client in `gemini`, its stream in `wire::gemini`),
//! `vertex` (Google's Vertex AI: its client in `vertex`, Application Default Credentials in
//! `google`) and `azure` (Azure OpenAI deployments through the OpenAI client, in `azure`, and
//! Microsoft Entra ID tokens). What the clouds' credentials share is in `auth`; [`secret`]
//! keeps a credential out of every `Debug`.
#![cfg_attr(docsrs, feature(doc_cfg))]

/// The `Model` methods a hosted client answers from its settings' `display_name`,
/// `context_window` and `images` (declared before the clients' modules, which use it).
macro_rules! described_by_settings {
    () => {
        fn name(&self) -> String {
            self.settings.display_name.clone()
        }

        fn context_window(&self) -> Option<u64> {
            self.settings.context_window
        }

        fn accepts_images(&self) -> bool {
            self.settings.images
        }
    };
}

pub mod anthropic;
#[cfg(any(feature = "azure", feature = "bedrock", feature = "vertex"))]
#[cfg_attr(
    docsrs,
    doc(cfg(any(feature = "azure", feature = "bedrock", feature = "vertex")))
)]
pub mod auth;
#[cfg(feature = "bedrock")]
#[cfg_attr(docsrs, doc(cfg(feature = "bedrock")))]
pub mod aws;
#[cfg(feature = "azure")]
#[cfg_attr(docsrs, doc(cfg(feature = "azure")))]
pub mod azure;
#[cfg(feature = "bedrock")]
#[cfg_attr(docsrs, doc(cfg(feature = "bedrock")))]
pub mod bedrock;
pub mod catalog;
#[cfg(feature = "gemini")]
#[cfg_attr(docsrs, doc(cfg(feature = "gemini")))]
pub mod gemini;
#[cfg(feature = "vertex")]
#[cfg_attr(docsrs, doc(cfg(feature = "vertex")))]
pub mod google;
pub mod http;
pub mod openai;
pub mod secret;
pub mod tool_names;
mod turns;
#[cfg(feature = "vertex")]
#[cfg_attr(docsrs, doc(cfg(feature = "vertex")))]
pub mod vertex;
pub mod wire;

/// Opens the model `spec` names (`PROVIDER/MODEL` or `scripted:PATH`) from the built-in
/// providers, with the API keys and base URLs of the process's environment (see
/// [`catalog`]). With providers of one's own, use a [`catalog::ModelCatalog`].
///
/// ```no_run
/// let model = agentry_models::open("anthropic/claude-sonnet-4-5")?;
/// # Ok::<(), agentry::model::ModelError>(())
/// ```
pub fn open(
    spec: &str,
) -> Result<std::sync::Arc<dyn agentry::model::Model>, agentry::model::ModelError> {
    let env = |name: &str| std::env::var(name).ok();
    catalog::ModelCatalog::new(&Default::default(), &env).open(spec)
}
