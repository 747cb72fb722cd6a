//! The lists of the interface, written once (neighbours.md section 0.5). Every list has two
//! answers:
//!
//! - the whole list (`GET /department`, `/group`, `/enrollment`, `/content`, `/user`,
//!   `/user/v2`, `/gamification/points`): every row the caller may see, read from the core's
//!   server stream and written as the rows arrive (`stream`), rows directly under
//!   `<response>` or a top-level JSON array;
//! - one page (`GET /departments`, `GET|POST /enrollments`, …): one unary `List*` call, rows
//!   inside an element named for the list, then `nextPageToken` while more pages follow
//!   (`page`).
//!
//! A list is a [`Listing`] (its rows, their XML and JSON, its filters and date windows); a
//! [`Streamed`] one when the core streams it (its stream RPC), a [`Whole`] one when that stream
//! is asked for by the query's filters, and a [`Paged`] one when it has pages. The handlers
//! (`handlers`) read the query (`query`) or the body (`body`) the same way for every list.
//! Adding a list is a trait impl, a route naming `whole::<L>` or `page::<L>`, and the core's
//! service function; a whole list named by its path (`/content/{id}/final_statuses`) calls
//! [`stream`] with the request its handler builds.

mod body;
mod handlers;
mod page;
mod query;
mod stream;
#[cfg(test)]
pub(crate) mod testing;

pub(crate) use body::{ListBody, xml_list};
pub(crate) use handlers::{page, page_by_post, stream, whole, whole_by_post};
pub(crate) use page::Page;
pub(crate) use query::{QueryFields, parse_fields, whole_number};

use std::future::Future;

use lms_proto::v1::PageRequest;
use lms_proto::v1::admin_service_client::AdminServiceClient;
use tonic::Streaming;

use crate::error::GatewayError;
use crate::replicas::CoreChannel;
use crate::xml::writer::XmlWriter;

/// The client a listing's calls are made with.
pub(crate) type Admin = AdminServiceClient<CoreChannel>;

/// Which answer a row is written into: some lists write a value differently in their whole
/// list and in their pages (groups' `isSmart`: `true`/`false` against `1`/`0`), as the
/// clients we replay expect.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Form {
    Whole,
    Page,
}

/// A list of rows: how each is written, and what the query may narrow it by.
pub(crate) trait Listing: Send + Sync + 'static {
    /// One row, as the core sends it.
    type Item: Send + 'static;

    /// The list's name in logs and spans.
    const NAME: &'static str;
    /// The names of the list's filters, in the order [`Filters::into_lists`] gives them.
    const FILTERS: &'static [&'static str];
    /// The names of the list's date windows (`accessDate` read as `accessDate[startDate]` and
    /// `accessDate[endDate]`), in the order
    /// [`Filters::into_lists_and_windows`] gives them.
    const WINDOWS: &'static [&'static str] = &[];

    /// The row's element, complete.
    fn write_xml(xml: &mut XmlWriter, item: &Self::Item, form: Form);

    /// The row's JSON object, the keys in the XML's element order.
    fn write_json(out: &mut String, item: &Self::Item, form: Form);

    /// About how many bytes the row's XML takes, so that a page is written into one buffer.
    fn xml_bytes_hint(_item: &Self::Item) -> usize {
        256
    }
}

/// A list the core streams, written as its rows arrive.
pub(crate) trait Streamed: Listing {
    /// One message of the core's stream.
    type Message: Send + 'static;
    /// What opens the stream.
    type StreamRequest: Clone + Send + Sync + 'static;

    /// Opens the stream (one replica, no deadline: the handler bounds each wait).
    fn open(
        admin: Admin,
        request: tonic::Request<Self::StreamRequest>,
    ) -> impl Future<Output = Result<tonic::Response<Streaming<Self::Message>>, tonic::Status>> + Send;

    /// The rows one message carries.
    fn rows(message: Self::Message) -> Vec<Self::Item>;
}

/// A streamed list asked for by its filters alone (in the query or in a body).
pub(crate) trait Whole: Streamed {
    fn stream_request(filters: Filters) -> Self::StreamRequest;
}

/// A [`Streamed`] impl's types and methods, which only name the core's stream RPC, its request
/// and message, and a message's rows:
/// `streamed_rpc!(stream_enrollments(StreamEnrollmentsRequest) -> StreamEnrollmentsResponse.enrollments);`
/// inside the impl.
macro_rules! streamed_rpc {
    ($method:ident($request:ty) -> $message:ident.$rows:ident) => {
        type Message = $message;
        type StreamRequest = $request;

        async fn open(
            mut admin: $crate::listing::Admin,
            request: tonic::Request<Self::StreamRequest>,
        ) -> Result<tonic::Response<tonic::Streaming<Self::Message>>, tonic::Status> {
            admin.$method(request).await
        }

        fn rows(message: Self::Message) -> Vec<Self::Item> {
            message.$rows
        }
    };
}
pub(crate) use streamed_rpc;

/// A [`Paged`] impl's types and the methods that only name the core's RPC, its request and
/// answer, and the answer's rows:
/// `paged_rpc!(list_enrollments(ListEnrollmentsRequest) -> ListEnrollmentsResponse.enrollments);`
/// inside the impl.
macro_rules! paged_rpc {
    ($method:ident($request:ty) -> $answer:ident.$rows:ident) => {
        type ListRequest = $request;
        type ListResponse = $answer;

        async fn list(
            mut admin: $crate::listing::Admin,
            request: tonic::Request<Self::ListRequest>,
        ) -> Result<tonic::Response<Self::ListResponse>, tonic::Status> {
            admin.$method(request).await
        }

        fn page_of(answer: Self::ListResponse) -> (Vec<Self::Item>, String) {
            (answer.$rows, answer.next_page_token)
        }
    };
}
pub(crate) use paged_rpc;

/// A list that is also read page by page, through a unary `List*` call.
pub(crate) trait Paged: Listing {
    type ListRequest: Clone + Send + Sync + 'static;
    type ListResponse: Send + 'static;

    /// The element (and JSON key) holding a page's rows: `departments`, `userProfiles`.
    const PAGE_ELEMENT: &'static str;

    /// The request for `page` of the rows `filters` select; a listing whose filters are more
    /// than opaque text refuses here what it cannot send.
    fn list_request(filters: Filters, page: PageRequest)
    -> Result<Self::ListRequest, GatewayError>;

    fn list(
        admin: Admin,
        request: tonic::Request<Self::ListRequest>,
    ) -> impl Future<Output = Result<tonic::Response<Self::ListResponse>, tonic::Status>> + Send;

    /// The page's rows and the next page's token (empty on the last page).
    fn page_of(response: Self::ListResponse) -> (Vec<Self::Item>, String);
}

/// The values of a list's filters: one list of values per name of [`Listing::FILTERS`], in
/// that order (an empty list filters nothing), and one window per name of
/// [`Listing::WINDOWS`].
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Filters {
    lists: Vec<Vec<String>>,
    windows: Vec<Window>,
}

/// The bounds of one date window as given, either or both absent.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Window {
    pub(crate) start: Option<String>,
    pub(crate) end: Option<String>,
}

impl Window {
    /// Whether neither bound is given.
    pub(crate) fn is_open(&self) -> bool {
        self.start.is_none() && self.end.is_none()
    }
}

impl Filters {
    fn of(lists: usize, windows: usize) -> Self {
        Self {
            lists: vec![Vec::new(); lists],
            windows: vec![Window::default(); windows],
        }
    }

    /// No filter of listing `L`.
    pub(crate) fn none<L: Listing>() -> Self {
        Self::of(L::FILTERS.len(), L::WINDOWS.len())
    }

    /// The lists, in the order of the listing's `FILTERS`.
    pub(crate) fn into_lists<const N: usize>(self) -> [Vec<String>; N] {
        self.into_lists_and_windows::<N, 0>().0
    }

    /// The lists and the windows, each in the listing's order.
    pub(crate) fn into_lists_and_windows<const N: usize, const M: usize>(
        self,
    ) -> ([Vec<String>; N], [Window; M]) {
        let (mut lists, mut windows) = self.into_parts();
        (
            std::array::from_fn(|_| lists.next().unwrap_or_default()),
            std::array::from_fn(|_| windows.next().unwrap_or_default()),
        )
    }

    /// The lists and the windows, each in the listing's order, to be taken one by one.
    pub(crate) fn into_parts(
        self,
    ) -> (std::vec::IntoIter<Vec<String>>, std::vec::IntoIter<Window>) {
        (self.lists.into_iter(), self.windows.into_iter())
    }

    /// How many values are given in all (for the request's span).
    fn values(&self) -> usize {
        self.lists.iter().map(Vec::len).sum::<usize>()
            + self
                .windows
                .iter()
                .map(|window| {
                    usize::from(window.start.is_some()) + usize::from(window.end.is_some())
                })
                .sum::<usize>()
    }
}
