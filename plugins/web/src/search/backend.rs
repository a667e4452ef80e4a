//! Choosing the search provider: `backend = "…"` in the plugin's settings, else the
//! first of SearXNG (a URL, no key), Brave, Tavily, Exa, Firecrawl, Parallel whose URL
//! or key is present. When none is, the error names what to set.

use serde::Deserialize;

use super::Provider;
use super::brave::{self, Brave};
use super::exa::{self, Exa};
use super::firecrawl::{self, Firecrawl};
use super::parallel::{self, Parallel};
use super::searxng::Searxng;
use super::tavily::{self, Tavily};

/// The `[plugins.config.web.search]` table.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SearchSettings {
    /// `searxng`, `brave`, `tavily`, `exa`, `firecrawl` or `parallel`.
    pub backend: Option<String>,
    /// The SearXNG instance (else `$SEARXNG_URL`).
    pub searxng_url: Option<String>,
    /// Another endpoint for the chosen provider's API (a proxy or a self-hosted one).
    pub base_url: Option<String>,
}

/// The providers in the order they are tried, with what each needs.
const ORDER: [(&str, &str); 6] = [
    ("searxng", "SEARXNG_URL"),
    ("brave", "BRAVE_SEARCH_API_KEY"),
    ("tavily", "TAVILY_API_KEY"),
    ("exa", "EXA_API_KEY"),
    ("firecrawl", "FIRECRAWL_API_KEY"),
    ("parallel", "PARALLEL_API_KEY"),
];

/// Why no provider can run.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum NoBackend {
    /// `backend` names something we do not know.
    #[error(
        "unknown web search backend {0:?} (use searxng, brave, tavily, exa, firecrawl or parallel)"
    )]
    Unknown(String),
    /// The chosen provider's URL or key is missing.
    #[error("web search backend {backend} needs {needs}")]
    Missing {
        /// The provider.
        backend: String,
        /// What to set.
        needs: String,
    },
    /// Nothing is configured.
    #[error(
        "no web search backend: set SEARXNG_URL (or searxng_url in [plugins.config.web.search]) or one of BRAVE_SEARCH_API_KEY, TAVILY_API_KEY, EXA_API_KEY, FIRECRAWL_API_KEY, PARALLEL_API_KEY"
    )]
    None,
}

/// The provider to use, given the settings and a way to read environment variables.
pub fn choose(
    settings: &SearchSettings,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Box<dyn Provider>, NoBackend> {
    let present = |var: &str| env(var).filter(|v| !v.trim().is_empty());
    let searxng_url = settings
        .searxng_url
        .clone()
        .or_else(|| present("SEARXNG_URL"));
    let firecrawl_url = present("FIRECRAWL_API_URL");
    let name = match &settings.backend {
        Some(name) => name.trim().to_ascii_lowercase(),
        None => ORDER
            .iter()
            .find(|(name, var)| match *name {
                "searxng" => searxng_url.is_some(),
                "firecrawl" => present(var).is_some() || firecrawl_url.is_some(),
                _ => present(var).is_some(),
            })
            .map(|(name, _)| name.to_string())
            .ok_or(NoBackend::None)?,
    };
    let Some((_, var)) = ORDER.iter().find(|(n, _)| *n == name) else {
        return Err(NoBackend::Unknown(name));
    };
    let missing = || NoBackend::Missing {
        backend: name.clone(),
        needs: match name.as_str() {
            "searxng" => "SEARXNG_URL (or searxng_url in [plugins.config.web.search])".into(),
            "firecrawl" => {
                "FIRECRAWL_API_KEY (or FIRECRAWL_API_URL for a self-hosted instance)".into()
            }
            _ => var.to_string(),
        },
    };
    let base = |default: &str| {
        settings
            .base_url
            .clone()
            .unwrap_or_else(|| default.to_string())
    };
    let key = || present(var).ok_or_else(missing);
    Ok(match name.as_str() {
        "searxng" => Box::new(Searxng {
            base_url: searxng_url.ok_or_else(missing)?,
        }),
        "brave" => Box::new(Brave {
            base_url: base(brave::DEFAULT_URL),
            key: key()?,
        }),
        "tavily" => Box::new(Tavily {
            base_url: base(tavily::DEFAULT_URL),
            key: key()?,
        }),
        "exa" => Box::new(Exa {
            base_url: base(exa::DEFAULT_URL),
            key: key()?,
        }),
        "parallel" => Box::new(Parallel {
            base_url: base(parallel::DEFAULT_URL),
            key: key()?,
        }),
        _ => {
            let key = present(var).unwrap_or_default();
            let url = settings.base_url.clone().or(firecrawl_url);
            if key.is_empty() && url.is_none() {
                return Err(missing());
            }
            Box::new(Firecrawl {
                base_url: url.unwrap_or_else(|| firecrawl::DEFAULT_URL.to_string()),
                key,
            })
        }
    })
}
