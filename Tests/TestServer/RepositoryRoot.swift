public import Foundation

/// The repository's root, found upwards from this file: tests read the README, the DocC articles
/// and the Django app from it, wherever in `Tests/` their own file lies.
public let repositoryRoot: URL = {
    var directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    while directory.path != "/",
        !FileManager.default.fileExists(atPath: directory.appendingPathComponent("Package.swift").path)
    {
        directory = directory.deletingLastPathComponent()
    }
    return directory
}()
