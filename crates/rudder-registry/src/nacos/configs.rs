//! Reading Nacos config where Dubbo's metadata report keeps it (the registry's namespace): one
//! config by data id and group, trying every server in turn, and the configs of one group, listed
//! page by page (Nacos's config search, as its console lists them) and bounded.

use crate::error::RegistryError;
use crate::nacos::client::Connection;
use crate::nacos::http::{form_encode, request};
use crate::nacos::rules::{nacos_error, read_config};

/// Configs asked for at a time.
const PAGE: usize = 500;

/// A config of the registry's namespace (the metadata report's), from the first server that answers.
pub(crate) async fn read(
    connection: &Connection,
    data_id: &str,
    group: &str,
) -> Result<Option<String>, RegistryError> {
    let mut last = None;
    // Every server in turn, as the config centre does after a failure.
    for server in &connection.address.servers {
        let tenant = &connection.address.namespace;
        match read_config(connection, server, tenant, data_id, group).await {
            Ok(text) => return Ok(text),
            Err(error) => last = Some(error),
        }
    }
    Err(last.unwrap_or(RegistryError::Closed))
}

#[derive(serde::Deserialize)]
struct Page {
    #[serde(default, rename = "totalCount")]
    total: u64,
    #[serde(default, rename = "pageItems")]
    items: Vec<Listed>,
}

/// One config of a listing.
#[derive(serde::Deserialize)]
pub(crate) struct Listed {
    #[serde(default, rename = "dataId")]
    pub(crate) data_id: String,
    /// Its text, when the server sends it with the listing (Nacos and rnacos do).
    #[serde(default)]
    pub(crate) content: Option<String>,
}

/// The configs of `group` in the registry's namespace, at most `max` of them, asked of the first
/// server.
pub(crate) async fn list_group(
    connection: &Connection,
    group: &str,
    max: usize,
) -> Result<Vec<Listed>, RegistryError> {
    let server = connection
        .address
        .servers
        .first()
        .ok_or(RegistryError::Closed)?;
    let failed = |reason: String| {
        nacos_error(
            "list configs of",
            group.to_owned(),
            nacos_sdk::api::error::Error::ErrResult(reason),
        )
    };
    let mut listed = Vec::new();
    for page in 1.. {
        let query = format!(
            "/nacos/v1/cs/configs?search=accurate&dataId=&group={}&tenant={}&pageNo={page}&pageSize={PAGE}",
            form_encode(group),
            form_encode(&connection.address.namespace)
        );
        let wait = connection.options.connect_timeout();
        let token = &connection.token;
        let auth = (token.query(server, wait).await).map_err(|e| failed(e.to_string()))?;
        let answer = request(server, "GET", &(query + &auth), &[], "", wait)
            .await
            .map_err(|e| failed(e.to_string()))?;
        if answer.status == 403 {
            token.forget().await;
        }
        if answer.status != 200 {
            return Err(failed(format!("HTTP {}", answer.status)));
        }
        let page: Page = serde_json::from_str(&answer.body).map_err(|e| failed(e.to_string()))?;
        let done = page.items.is_empty();
        listed.extend(page.items);
        let total = usize::try_from(page.total).unwrap_or(usize::MAX).min(max);
        if done || listed.len() >= total {
            break;
        }
    }
    listed.truncate(max);
    Ok(listed)
}
