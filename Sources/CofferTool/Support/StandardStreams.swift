#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Musl)
import Musl
#endif
import ArgumentParser
import CofferStorage
import Foundation

/// Standard input, output and error, used so that nothing traps and nothing fails unnoticed.
///
/// `FileHandle.standardInput.readDataToEndOfFile()` reads without bound and traps when memory
/// runs out, and `FileHandle.write(_:)` traps on a full disk or a closed pipe; `print` fails
/// silently. Here input is read up to a limit, output errors become a ``CommandFailure`` (so the
/// command exits 1 with one line), and what `print` buffered is flushed and checked before the
/// tool exits.
package enum StandardStreams {
    /// The most `coffer add -` reads: a few hundred URIs, or a long migration export.
    static let uriInputLimit = 4 << 20
    /// The most a secret or a stored value read from standard input may be.
    static let valueInputLimit = 1 << 20

    /// All of standard input, refused (after reading one byte more than `limit`, no more) when
    /// it is longer than `limit` bytes.
    static func readInput(limit: Int, what: String) throws -> Data {
        try read(STDIN_FILENO, limit: limit, source: "standard input", what: what)
    }

    /// A file a person names (an export to import, a QR code image), read the same way: up to
    /// a limit, and a pipe (`<(command)`) as well as a regular file. What is imported decides
    /// which secrets are stored, so a regular file must be trusted as Coffer's own are: every
    /// directory and link on the way yours or root's (``FileTrust/checkPath(_:)``), the file
    /// yours (or root's) and not writable by others, checked on the open descriptor.
    package static func readFile(_ path: String, limit: Int) throws -> Data {
        do {
            try FileTrust.checkPath(path)
        } catch {
            guard case let .untrusted(on, owner, mode, reason) = error else { throw error }
            throw CommandFailure("Coffer will not read \(path): \(on) (owner uid \(owner), mode \(String(mode, radix: 8))) is not safe, as \(reason); copy the file to a directory of your own first")
        }
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd != -1 else { throw CommandFailure("cannot read \(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw CommandFailure("cannot read \(path): \(String(cString: strerror(errno)))") }
        let type = UInt32(info.st_mode) & UInt32(S_IFMT), owner = UInt32(info.st_uid), mode = UInt32(info.st_mode) & 0o7777
        if type == UInt32(S_IFDIR) { throw CommandFailure("\(path) is a directory, not a file") }
        if type == UInt32(S_IFREG) {
            let described = "Coffer will not read \(path) (owner uid \(owner), mode \(String(mode, radix: 8)))"
            if owner != UInt32(geteuid()), owner != 0 {
                throw CommandFailure("\(described): it belongs to another user, who could change what you import; copy it to a file of your own first")
            }
            if mode & 0o022 != 0 {
                throw CommandFailure("\(described): group or other users can write to it, and so change what you import; if it is yours, run `chmod go-w \(path)`")
            }
        }
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)  // a pipe is read to its end
        return try read(fd, limit: limit, source: path, what: "an export")
    }

    private static func read(_ fd: Int32, limit: Int, source: String, what: String) throws -> Data {
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while data.count <= limit {
            let wanted = min(buffer.count, limit + 1 - data.count)
            let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, wanted) }
            if count == 0 { return data }
            if count < 0 {
                if errno == EINTR { continue }
                throw CommandFailure("cannot read \(what) from \(source): \(String(cString: strerror(errno)))")
            }
            data.append(contentsOf: buffer[0..<count])
        }
        throw CommandFailure("\(source) holds more than \(limit / 1024) KiB, too much for \(what); nothing was read from it")
    }

    /// Standard input as lines without their line endings, blank lines left out, each with its
    /// line number (from 1) to name it in a message.
    static func inputLines(limit: Int, what: String) throws -> [(number: Int, text: String)] {
        let text = String(decoding: try readInput(limit: limit, what: what), as: UTF8.self)
        return text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).enumerated()
            .map { (number: $0.offset + 1, text: $0.element.trimmingCharacters(in: .whitespaces)) }
            .filter { !$0.text.isEmpty }
    }

    /// Writes `data` to standard output after what `print` buffered.
    package static func writeOutput(_ data: Data) throws {
        try flushOutput()
        do {
            try FileHandle.standardOutput.write(contentsOf: data)
        } catch {
            if (error as NSError).code == Int(EPIPE) || errno == EPIPE { throw Self.readerGone }
            throw Self.outputFailure((error as NSError).code == Int(ENOSPC) ? ENOSPC : errno)
        }
    }

    /// What ends a command whose reader closed standard output (`coffer list --json | head`)
    /// where SIGPIPE is ignored (a parent may ignore it, and children inherit that): quietly, with
    /// status 141, as SIGPIPE ends it everywhere else, so `set -o pipefail` still notices output
    /// that did not all arrive. (Thrown as an `ExitCode`, which every command passes on without
    /// a message.)
    static let readerGone = ExitStatus.readerGone.exitCode

    /// Flushes what `print` buffered; throws when any of it could not be written.
    static func flushOutput() throws {
        // C's `stdout` is a global that is never reassigned here (hence @preconcurrency).
        let output = stdout
        if fflush(output) != 0 || ferror(output) != 0 {
            let code = errno
            clearerr(output)
            if code == EPIPE { throw readerGone }
            throw outputFailure(code)
        }
    }

    /// Standard output that could not be written (a full disk, an I/O error), said with what
    /// to do first.
    private static func outputFailure(_ code: Int32) -> CommandFailure {
        let fix = code == ENOSPC || code == EDQUOT ? "Free some space where the output goes, or send it elsewhere"
            : "Send the output somewhere that can take it"
        return CommandFailure("\(fix): standard output could not be written (\(String(cString: strerror(code)))); what was printed is incomplete.")
    }

    /// Writes one line to standard error, escaped as everything the tool prints is (see
    /// `Output.swift`), so it stays one line. A failure is ignored: there is nowhere left to say it.
    package static func note(_ line: String) {
        try? FileHandle.standardError.write(contentsOf: Data((TerminalText.escaped(line) + "\n").utf8))
    }
}
