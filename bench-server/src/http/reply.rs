//! Building responses: a body with its content type, plain-text answers, and the `Connection: close` mark.

use http::header::{HeaderValue, CONNECTION, CONTENT_TYPE};
use http::{Response, StatusCode};

use super::body::ResponseBody;

pub(crate) const TEXT_PLAIN: HeaderValue = HeaderValue::from_static("text/plain; charset=utf-8");
pub(crate) const TEXT_XML: HeaderValue = HeaderValue::from_static("text/xml; charset=utf-8");

pub(crate) fn with_type(
    status: StatusCode,
    content_type: HeaderValue,
    body: ResponseBody,
) -> Response<ResponseBody> {
    let mut resp = Response::new(body);
    *resp.status_mut() = status;
    resp.headers_mut().insert(CONTENT_TYPE, content_type);
    resp
}

pub(crate) fn text(status: StatusCode, body: &'static str) -> Response<ResponseBody> {
    with_type(status, TEXT_PLAIN, body.into())
}

/// A response after which the connection closes (the request body was not read to its end).
pub(crate) fn closing(mut resp: Response<ResponseBody>) -> Response<ResponseBody> {
    resp.headers_mut()
        .insert(CONNECTION, HeaderValue::from_static("close"));
    resp
}
