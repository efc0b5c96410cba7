import ArgumentParser
import Foundation
import Logging
import MonoRailServer
import MonoRailServerPostgres

@main
struct MonoRailCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "monorail",
        abstract:
            "MonoRail's tools: a walkthrough demo, a reference server that speaks the Rails conventions, and a model scaffolder.",
        subcommands: [Demo.self, Serve.self, ScaffoldCommand.self, UploadCommand.self])
}

struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract:
            "Serve the resources of a schema file over HTTP, stored in SQLite or PostgreSQL: Rails style, or Django REST framework's, ApiModel's or Objects' conventions."
    )

    @Option(help: "A JSON schema file; without it, the built-in Train / Car / Conductor example.")
    var schema: String?

    @Option(
        name: [.customLong("database"), .customLong("db")],
        help: ArgumentHelp(
            "A SQLite file, :memory:, or a postgres://user[:password]@host[:port]/database URL.",
            discussion:
                "Several serve processes on one PostgreSQL database serve the same records, and each client of GET /changes gets every change once, in commit order."
        ))
    var database: String = ":memory:"

    @Option(help: "The port to listen on.")
    var port: Int = 3000

    @Option(help: "The address to bind.")
    var host: String = "127.0.0.1"

    @Option(
        help:
            "The protocol to speak: rails, django, apimodel, objects (MessagePack, singular paths) or jsonapi (JSON:API 1.1 with atomic operations)."
    )
    var conventions: Conventions = .rails

    @Option(help: "Page every index by this many records unless a page is asked for, as most servers do.")
    var pageSize: Int?

    enum Conventions: String, ExpressibleByArgument, CaseIterable {
        case rails, django, apimodel, objects, jsonapi

        var envelope: ServerEnvelope {
            switch self {
            case .rails: .rails
            case .django: .bare
            case .apimodel: .apiModel
            case .objects: .objects
            case .jsonapi: .jsonAPI
            }
        }
    }

    func run() async throws {
        let schema: ServerSchema
        do {
            schema = try self.schema.map { try ServerSchema.load(from: URL(fileURLWithPath: $0)) } ?? .trains
        } catch {
            throw ValidationError("\(error)")
        }
        var logger = Logger(label: "monorail")
        logger.logLevel = .info
        let configuration = ReferenceServer.Configuration(
            host: host, port: port, databasePath: database, logger: logger, envelope: conventions.envelope,
            defaultPageSize: pageSize)
        let server: ReferenceServer
        if database.hasPrefix("postgres://") || database.hasPrefix("postgresql://") {
            let location: PostgresLocation
            do {
                location = try PostgresLocation(url: database)
            } catch {
                throw ValidationError("--database: \(error)")
            }
            logger.info("records in PostgreSQL at \(location.redacted)")
            let store = try RecordStore(
                schema: schema, location: location, changeRetention: configuration.changeFeed.retention, logger: logger)
            server = ReferenceServer(store: store, configuration: configuration)
        } else {
            server = try ReferenceServer(schema: schema, configuration: configuration)
        }
        let names = schema.resources.map { conventions == .objects ? "/\($0.name)/" : "/\($0.pluralName)" }
            .joined(separator: ", ")
        let host = self.host
        try await server.run { port in
            print("monorail serve: http://\(host):\(port) — \(names) — Ctrl-C to stop")
        }
    }
}
