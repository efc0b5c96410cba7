import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Memory as Linux reports it, to measure what a step needs beside what it keeps.
public enum Memory {
    /// The process's resident bytes now and at their peak since ``resetPeak()`` (`/proc/self/status`).
    public static func resident() -> (now: Int, peak: Int) {
        var reading = (now: 0, peak: 0)
        let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
        for line in status.split(separator: "\n") {
            let parts = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard parts.count >= 2, let kilobytes = Int(parts[1]) else { continue }
            if parts[0] == "VmRSS:" { reading.now = kilobytes * 1024 }
            if parts[0] == "VmHWM:" { reading.peak = kilobytes * 1024 }
        }
        return reading
    }

    /// Makes the peak resident size the current one (writing 5 to `/proc/self/clear_refs`).
    public static func resetPeak() {
        try? "5".write(toFile: "/proc/self/clear_refs", atomically: false, encoding: .utf8)
    }

    /// Returns the heap's free memory to the system (glibc's `malloc_trim`, found at run time: the
    /// Glibc module does not declare it), so resident size is what is in use.
    public static func trim() {
        #if canImport(Glibc)
            typealias Trim = @convention(c) (Int) -> Int32
            guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_trim") else { return }
            _ = unsafeBitCast(symbol, to: Trim.self)(0)
        #endif
    }
}
