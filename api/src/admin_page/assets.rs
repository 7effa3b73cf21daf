//! Static assets of the admin page (htmx, the page's own script and stylesheet), compiled into the binary: the page works on a closed network
//! and a deployment is one file.

use axum::{
    extract::Path,
    http::{StatusCode, header},
    response::{IntoResponse, Response},
};

/// htmx 2.0.11 (BSD Zero Clause License, `api/assets/htmx-LICENSE`), vendored unmodified.
const HTMX: &[u8] = include_bytes!("../../assets/htmx-2.0.11.min.js");
const STYLESHEET: &[u8] = include_bytes!("../../assets/admin.css");
/// Times in the reader's zone (see the file).
const SCRIPT: &[u8] = include_bytes!("../../assets/admin.js");

/// `GET /admin/assets/{name}`: `htmx.min.js`, `admin.js` or `admin.css`.
pub async fn asset(Path(name): Path<String>) -> Response {
    let (body, content_type) = match name.as_str() {
        "htmx.min.js" => (HTMX, "text/javascript; charset=utf-8"),
        "admin.css" => (STYLESHEET, "text/css; charset=utf-8"),
        "admin.js" => (SCRIPT, "text/javascript; charset=utf-8"),
        _ => return (StatusCode::NOT_FOUND, "no such asset").into_response(),
    };
    // The files change only with the binary; an hour of caching spares reloads during a session.
    ([(header::CONTENT_TYPE, content_type), (header::CACHE_CONTROL, "private, max-age=3600")], body).into_response()
}
