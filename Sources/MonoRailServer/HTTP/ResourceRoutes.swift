import Foundation
import HTTPTypes
import Hummingbird
import Logging
import MonoRailClient
import NIOCore

/// The Rails routes of every resource: index, show, create, update (PUT and PATCH) and destroy.
struct ResourceRoutes: Sendable {
    let store: RecordStore
    let maxBodySize: Int

    func install(on router: Router<BasicRequestContext>) {
        router.get("/:resource") { request, context in try index(request, context) }
        router.post("/:resource") { request, context in try await create(request, context) }
        router.get("/:resource/:id") { _, context in try show(context) }
        router.put("/:resource/:id") { request, context in try await update(request, context) }
        router.patch("/:resource/:id") { request, context in try await update(request, context) }
        router.delete("/:resource/:id") { _, context in try destroy(context) }
    }

    private func resource(_ context: BasicRequestContext) throws -> ResourceSchema {
        guard let name = context.parameters.get("resource"), let resource = store.schema.resource(plural: name) else {
            throw APIProblem(.notFound)
        }
        return resource
    }

    /// Route parameters arrive percent-encoded; ids are compared decoded, as Rails does.
    private func id(_ context: BasicRequestContext) -> String {
        let raw = context.parameters.get("id") ?? ""
        return raw.removingPercentEncoding ?? raw
    }

    private func index(_ request: Request, _ context: BasicRequestContext) throws -> Response {
        let resource = try resource(context)
        var filters: [String: String] = [:]
        for (name, value) in request.uri.queryParameters {
            let key = String(name).removingPercentEncoding ?? String(name)
            filters[key] = String(value)
        }
        let (records, total) = try store.list(resource, filters: filters)
        var response = JSONResponse.make(.ok, ["\(resource.pluralName)": .array(records)])
        response.headers[.init("X-Total-Count")!] = String(total)
        return response
    }

    private func show(_ context: BasicRequestContext) throws -> Response {
        let resource = try resource(context)
        guard let record = try store.find(resource, id: id(context)) else { throw APIProblem(.notFound) }
        return JSONResponse.make(.ok, [resource.name: record])
    }

    private func create(_ request: Request, _ context: BasicRequestContext) async throws -> Response {
        let resource = try resource(context)
        let attributes = try await self.attributes(of: request, for: resource)
        do {
            let record = try store.create(resource, attributes: attributes)
            var response = JSONResponse.make(.created, [resource.name: record])
            if let id = record["id"], let text = id.intValue.map(String.init) ?? id.stringValue {
                response.headers[.location] = "/\(resource.pluralName)/\(APIPath.encodeSegment(text))"
            }
            return response
        } catch let error as RecordValidationError {
            return JSONResponse.validation(error)
        }
    }

    private func update(_ request: Request, _ context: BasicRequestContext) async throws -> Response {
        let resource = try resource(context)
        let attributes = try await self.attributes(of: request, for: resource)
        do {
            guard let record = try store.update(resource, id: id(context), attributes: attributes) else {
                throw APIProblem(.notFound)
            }
            return JSONResponse.make(.ok, [resource.name: record])
        } catch let error as RecordValidationError {
            return JSONResponse.validation(error)
        }
    }

    private func destroy(_ context: BasicRequestContext) throws -> Response {
        let resource = try resource(context)
        guard try store.delete(resource, id: id(context)) else { throw APIProblem(.notFound) }
        return Response(status: .noContent)
    }

    /// The attributes sent, wrapped in the singular root (`{"train": {…}}`) or bare.
    private func attributes(of request: Request, for resource: ResourceSchema) async throws -> [String: JSONValue] {
        let buffer: ByteBuffer
        do {
            buffer = try await request.body.collect(upTo: maxBodySize)
        } catch {
            throw APIProblem(.contentTooLarge, "the body is larger than \(maxBodySize) bytes")
        }
        let json: JSONValue
        do {
            json = try JSONParser().parse(Data(buffer.readableBytesView))
        } catch {
            throw APIProblem(.badRequest, "the body is not valid JSON: \(error)")
        }
        guard case .object(let object) = json else {
            throw APIProblem(.badRequest, "the body must be a JSON object")
        }
        if object.count == 1, case .object(let wrapped)? = object[resource.name] {
            return wrapped
        }
        return object
    }
}

/// An HTTP error answered as JSON: `{"error": "Not Found"}`.
struct APIProblem: Error, HTTPResponseError {
    let status: HTTPResponse.Status
    let message: String?

    init(_ status: HTTPResponse.Status, _ message: String? = nil) {
        self.status = status
        self.message = message
    }

    func response(from request: Request, context: some RequestContext) throws -> Response {
        var body: JSONValue = ["error": .string(status.reasonPhrase)]
        if let message { body = ["error": .string(status.reasonPhrase), "message": .string(message)] }
        return JSONResponse.make(status, body)
    }
}

enum JSONResponse {
    static func make(_ status: HTTPResponse.Status, _ body: JSONValue) -> Response {
        Response(
            status: status, headers: [.contentType: "application/json; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(bytes: body.jsonData(sortedKeys: true))))
    }

    static func validation(_ error: RecordValidationError) -> Response {
        let errors = JSONValue.object(error.messages.mapValues { .array($0.map(JSONValue.string)) })
        return make(.unprocessableContent, ["errors": errors])
    }
}

/// Answers anything no route took, and any unexpected error, as JSON — never an empty 404 or a 500
/// without a body.
struct JSONErrorMiddleware: RouterMiddleware {
    typealias Context = BasicRequestContext

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        do {
            return try await next(request, context)
        } catch let problem as APIProblem {
            return try problem.response(from: request, context: context)
        } catch let error as HTTPError {
            return JSONResponse.make(error.status, ["error": .string(error.status.reasonPhrase)])
        } catch {
            context.logger.error("request failed: \(error)")
            return JSONResponse.make(.internalServerError, ["error": "Internal Server Error"])
        }
    }
}
