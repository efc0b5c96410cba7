import Foundation
import HTTPTypes

/// The one place the Resources layer hands a request to ``APIClient``: every action, kept write,
/// atomic batch, relationship membership, file and event stream goes through it.
///
/// Around the client's own send (middleware, retry, log, de-duplication, the request's span) it
/// adds what a model's request needs and a bare client call does not know:
/// - a refusal before anything is sent when the configuration cannot send (no API root yet);
/// - the preconditions: `Idempotency-Key` for a write the outbox may send again, `If-Match` for a
///   conditional write, `If-None-Match` / `If-Modified-Since` for a cached answer to revalidate;
/// - the store's reachability: an answer, any answer, says the server is there; no answer says
///   it is not (``ResourceStore/isOffline``).
struct Exchange: Sendable {
    /// What a request promises the server beyond its method, route and body.
    struct Preconditions: Sendable {
        /// Sent as `Idempotency-Key`: the server applies the write once however often it arrives.
        var idempotencyKey: String?
        /// Sent as `If-Match`: the write applies only to the record as last read.
        var ifMatch: String?
        /// Sent as `If-None-Match`: the entity tag of a cached answer the server may confirm.
        var ifNoneMatch: String?
        /// Sent as `If-Modified-Since`: the date of a cached answer the server may confirm.
        var ifModifiedSince: String?
    }

    let client: APIClient
    /// Why nothing can be sent (no API root yet); bodies received otherwise still merge.
    let refusal: APIError?
    /// The store whose reachability answers update; `nil` for a request no store made (a file
    /// fetched with a client of the app's).
    let store: ResourceStore?

    init(client: APIClient, refusal: APIError? = nil, store: ResourceStore? = nil) {
        self.client = client
        self.refusal = refusal
        self.store = store
    }

    static let idempotencyKeyField = HTTPField.Name("Idempotency-Key")

    /// Sends a request with its preconditions and says what its answer, or the lack of one, tells
    /// about the server's reachability.
    func send(_ request: APIRequest, _ preconditions: Preconditions = Preconditions()) async throws -> APIResponse {
        if let refusal { throw refusal }
        var request = request
        if let etag = preconditions.ifNoneMatch { request.headers[.ifNoneMatch] = etag }
        if let date = preconditions.ifModifiedSince { request.headers[.ifModifiedSince] = date }
        if let key = preconditions.idempotencyKey, let name = Self.idempotencyKeyField {
            // A structured-field string, as the draft writes it.
            request.headers[name] = "\"\(key)\""
        }
        if let ifMatch = preconditions.ifMatch { request.headers[.ifMatch] = ifMatch }
        do {
            let response = try await client.send(request)
            store?.noteReachability(answered: true)
            return response
        } catch let error as APIError {
            if error.response != nil {
                store?.noteReachability(answered: true)
            } else if error.isUnanswered {
                store?.noteReachability(answered: false)
            }
            throw error
        }
    }

    /// Opens a response read as it arrives: an event stream. Its reachability is the stream's own
    /// (``LiveUpdates/state``), so the store's is left to the requests.
    func stream(_ request: APIRequest, maxBufferedSize: Int) async throws -> (
        response: APIResponse, body: ResponseBodyStream
    ) {
        if let refusal { throw refusal }
        return try await client.stream(request, maxBufferedSize: maxBufferedSize)
    }
}
