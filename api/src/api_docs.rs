//! The API reference for people, at `/api/docs`: Swagger UI reading `GET /api/openapi.json`.
//!
//! Like the admin page, every file comes from the binary (no CDN), so the reference works on a
//! closed network and shows exactly the contract this build serves. Swagger UI is
//! `swagger-ui-dist` 5.35.0 from npm, vendored unmodified in `api/assets/swagger-ui-5.35.0/`
//! (Apache License 2.0: `LICENSE`, `NOTICE`, and the licences of what its bundle contains in
//! `swagger-ui-bundle.js.LICENSE.txt`); only the bundle and its stylesheet are taken. Like
//! `/api/openapi.json`, the page needs no key; "Authorize" takes one for trying requests out.

use axum::{
    Router,
    extract::Path,
    http::{HeaderValue, StatusCode, header},
    response::{IntoResponse, Response},
    routing::get,
};

use crate::state::AppState;

const BUNDLE: &[u8] = include_bytes!("../assets/swagger-ui-5.35.0/swagger-ui-bundle.js");
const STYLESHEET: &[u8] = include_bytes!("../assets/swagger-ui-5.35.0/swagger-ui.css");

/// The page: Swagger UI's mount point, its files, and [`START`].
const PAGE: &str = r#"<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>quickact API reference</title>
<link rel="stylesheet" href="/api/docs/swagger-ui.css">
<link rel="stylesheet" href="/api/docs/docs.css">
</head>
<body>
<header class="top"><span class="brand">quickact API reference</span><a href="/api/openapi.json">openapi.json</a><a href="/admin">admin page</a></header>
<div id="swagger-ui"></div>
<script src="/api/docs/swagger-ui-bundle.js"></script>
<script src="/api/docs/start.js"></script>
</body>
</html>
"#;

/// Starts Swagger UI. A file of its own, not an inline script, so the page's CSP allows scripts
/// from this origin only.
const START: &str = r##"// Swagger UI on this API's description.
window.addEventListener("load", function () {
  window.ui = SwaggerUIBundle({
    url: "/api/openapi.json",
    dom_id: "#swagger-ui",
    presets: [SwaggerUIBundle.presets.apis],
    layout: "BaseLayout",
    deepLinking: true,
    docExpansion: "list",
    defaultModelsExpandDepth: 0,
    displayRequestDuration: true,
    // The public validator badge would call out to the internet.
    validatorUrl: null,
  });
});
"##;

/// The reference's own header, in the admin page's colours.
const DOCS_CSS: &str = r#"body { margin: 0; font-family: system-ui, -apple-system, "Segoe UI", "Noto Sans", sans-serif; }
header.top { display: flex; align-items: center; gap: 20px; padding: 10px 24px; background: #101828; color: #fff; }
header.top .brand { font-weight: 700; margin-right: auto; }
header.top a { color: #d0d5dd; text-decoration: none; }
header.top a:hover { color: #fff; }
"#;

/// What the page may load: its own files and the description, nothing from elsewhere. Swagger UI
/// sets element styles from script (allowed) and shows icons as `data:` images.
const CONTENT_SECURITY_POLICY: &str =
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; form-action 'self'; base-uri 'none'";

/// The routes of the reference.
pub fn routes() -> Router<AppState> {
    Router::new().route("/api/docs", get(page)).route("/api/docs/{name}", get(asset))
}

/// `GET /api/docs`
async fn page() -> Response {
    let mut response = ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], PAGE).into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(CONTENT_SECURITY_POLICY));
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("same-origin"));
    response
}

/// `GET /api/docs/{name}`: Swagger UI's files and the page's own.
async fn asset(Path(name): Path<String>) -> Response {
    let (body, content_type): (&'static [u8], &str) = match name.as_str() {
        "swagger-ui-bundle.js" => (BUNDLE, "text/javascript; charset=utf-8"),
        "swagger-ui.css" => (STYLESHEET, "text/css; charset=utf-8"),
        "start.js" => (START.as_bytes(), "text/javascript; charset=utf-8"),
        "docs.css" => (DOCS_CSS.as_bytes(), "text/css; charset=utf-8"),
        _ => return (StatusCode::NOT_FOUND, "no such file").into_response(),
    };
    // The files change only with the binary.
    ([(header::CONTENT_TYPE, content_type), (header::CACHE_CONTROL, "public, max-age=3600")], body).into_response()
}
