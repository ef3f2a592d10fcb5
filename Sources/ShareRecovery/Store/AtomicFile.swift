#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import ShareCrypto

/// One mutating file-system call of a store, as the fault hook sees it. Names are relative to the
/// store directory.
package enum StoreIOStep: Sendable, Hashable, CustomStringConvertible {
    /// `open(O_CREAT|O_EXCL)` of a temporary file.
    case createTemporary(String)
    /// One `write(2)` call into a temporary file (a file may take several).
    case write(String)
    /// `fsync(2)` of a temporary file.
    case fsync(String)
    /// `rename(2)` of the first name over the second.
    case rename(String, String)
    /// `fsync(2)` of the store directory.
    case fsyncDirectory
    /// `unlink(2)`.
    case unlink(String)

    package var description: String {
        switch self {
        case .createTemporary(let name): "create \(name)"
        case .write(let name): "write \(name)"
        case .fsync(let name): "fsync \(name)"
        case .rename(let from, let to): "rename \(from) to \(to)"
        case .fsyncDirectory: "fsync directory"
        case .unlink(let name): "unlink \(name)"
        }
    }
}

/// What the fault hook makes of a step.
package enum StoreFault: Sendable, Hashable {
    /// The call fails with this errno (e.g. `ENOSPC`) and does nothing.
    case fail(Int32)
    /// The call is interrupted (`EINTR`) and does nothing; the store retries it.
    case interrupt
    /// A `write` writes at most one byte; other calls ignore it.
    case shortWrite
}

/// Consulted before every mutating call: `nil` lets the call run normally. Tests use it to fail the
/// Nth step, interrupt calls or shorten writes.
package typealias StoreFaultHook = @Sendable (StoreIOStep) -> StoreFault?

/// The store directory: atomic replacement of small files, crash-safe by construction.
///
/// A file is replaced by writing a temporary file in the same directory, `fsync`ing it, renaming
/// it over the target and `fsync`ing the directory, so the name always refers to a complete file,
/// old or new, across crashes and power loss. Temporary files start with ``temporaryPrefix`` and
/// are removed when a store opens.
struct StoreDirectory: Sendable {
    /// Prefix of every temporary file name.
    static let temporaryPrefix = ".tmp."

    let path: String
    let faultHook: StoreFaultHook?

    func path(of name: String) -> String { path + "/" + name }

    // MARK: Opening

    /// Creates the directory (mode 0700) unless it exists, and checks that it is a directory.
    func createIfMissing() throws(ShareRecoveryError) {
        if mkdir(path, 0o700) != 0, errno != EEXIST {
            throw Self.failure("create the store directory", errno)
        }
        var info = stat()
        guard stat(path, &info) == 0 else { throw Self.failure("stat the store directory", errno) }
        guard info.st_mode & S_IFMT == S_IFDIR else {
            throw ShareRecoveryError(.storageFailure, "the store path is not a directory")
        }
    }

    /// Takes the store's exclusive lock for the caller's lifetime; the descriptor is the lock.
    /// Serialising processes keeps the attempt counter honest and temporary-file cleanup safe.
    func lockExclusively(_ name: String) throws(ShareRecoveryError) -> Int32 {
        let descriptor = Self.retrying { open(path(of: name), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600) }
        guard descriptor >= 0 else { throw Self.failure("open \(name)", errno) }
        guard Self.retrying({ flock(descriptor, LOCK_EX | LOCK_NB) }) == 0 else {
            let code = errno
            close(descriptor)
            if code == EWOULDBLOCK {
                // The holder is running (a crashed one leaves no lock: the kernel drops it with the process).
                throw ShareRecoveryError(
                    .operationInProgress,
                    "the store is in use by another store object or process (a recovery, backup or method change of this wallet may be running); retry when it has finished"
                )
            }
            throw Self.failure("lock \(name)", code)
        }
        return descriptor
    }

    /// The names in the directory, without `.` and `..`.
    func names() throws(ShareRecoveryError) -> [String] {
        guard let stream = opendir(path) else { throw Self.failure("list the store directory", errno) }
        defer { closedir(stream) }
        var names: [String] = []
        while true {
            errno = 0
            guard let entry = readdir(stream) else {
                if errno != 0 { throw Self.failure("list the store directory", errno) }
                break
            }
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    /// Deletes leftover temporary files of an interrupted write.
    /// - Returns: How many were deleted.
    @discardableResult
    func removeTemporaryFiles() throws(ShareRecoveryError) -> Int {
        var removed = 0
        for name in try names() where name.hasPrefix(Self.temporaryPrefix) {
            if try remove(name, synchronising: false) { removed += 1 }
        }
        if removed > 0 { try synchroniseDirectory() }
        return removed
    }

    // MARK: Reading

    /// Reads a whole file, or `nil` when it does not exist.
    /// - Throws: `storageFailure` for I/O errors, `storeCorrupted` for a file over `maximumCount` bytes.
    func read(_ name: String, maximumCount: Int) throws(ShareRecoveryError) -> [UInt8]? {
        let descriptor = Self.retrying { open(path(of: name), O_RDONLY | O_CLOEXEC | O_NOFOLLOW) }
        guard descriptor >= 0 else {
            if errno == ENOENT { return nil }
            throw Self.failure("open \(name)", errno)
        }
        defer { close(descriptor) }
        var contents: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = chunk.withUnsafeMutableBytes { buffer in
                Self.retrying { systemRead(descriptor, buffer.baseAddress, buffer.count) }
            }
            guard count >= 0 else { throw Self.failure("read \(name)", errno) }
            if count == 0 { return contents }
            contents += chunk[0..<count]
            guard contents.count <= maximumCount else {
                throw ShareRecoveryError(.storeCorrupted, "\(name) is larger than \(maximumCount) bytes")
            }
        }
    }

    // MARK: Writing

    /// Replaces `name` with `contents` atomically and durably: temporary file, `fsync`, `rename`,
    /// directory `fsync`. On failure before the rename the old file is untouched and the temporary
    /// file is removed (best effort; a later open removes what is left).
    func writeAtomically(_ name: String, _ contents: [UInt8]) throws(ShareRecoveryError) {
        let temporary = Self.temporaryPrefix + name + "." + Hex.encode(SystemRandom().bytes(count: 8))
        let descriptor = try call(.createTemporary(temporary), "create \(temporary)") {
            open(path(of: temporary), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        }
        do throws(ShareRecoveryError) {
            try writeAll(Int32(descriptor), contents, name: temporary)
            _ = try call(.fsync(temporary), "fsync \(temporary)") { fsync(Int32(descriptor)) }
        } catch {
            close(Int32(descriptor))
            unlink(path(of: temporary))
            throw error
        }
        // After a successful fsync, close has nothing left to report for a local file.
        close(Int32(descriptor))
        do throws(ShareRecoveryError) {
            try rename(temporary, over: name)
        } catch {
            unlink(path(of: temporary))
            throw error
        }
    }

    /// Renames `from` over `to` in one atomic step, then makes the rename durable.
    func rename(_ from: String, over to: String) throws(ShareRecoveryError) {
        _ = try call(.rename(from, to), "rename \(from) to \(to)") {
            systemRename(path(of: from), path(of: to))
        }
        try synchroniseDirectory()
    }

    /// Unlinks a file.
    /// - Parameter synchronising: Whether to `fsync` the directory afterwards.
    /// - Returns: Whether the file existed.
    @discardableResult
    func remove(_ name: String, synchronising: Bool = true) throws(ShareRecoveryError) -> Bool {
        let result = try call(.unlink(name), "unlink \(name)", tolerating: ENOENT) { unlink(path(of: name)) }
        guard result == 0 else { return false }
        if synchronising { try synchroniseDirectory() }
        return true
    }

    /// `fsync` of the directory, which makes creations, renames and unlinks in it durable.
    func synchroniseDirectory() throws(ShareRecoveryError) {
        let descriptor = Self.retrying { open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
        guard descriptor >= 0 else { throw Self.failure("open the store directory", errno) }
        defer { close(descriptor) }
        _ = try call(.fsyncDirectory, "fsync the store directory") { fsync(descriptor) }
    }

    private func writeAll(_ descriptor: Int32, _ contents: [UInt8], name: String) throws(ShareRecoveryError) {
        var offset = 0
        while offset < contents.count {
            var limit = contents.count - offset
            switch faultHook?(.write(name)) {
            case .fail(let code)?: throw Self.failure("write \(name)", code)
            case .interrupt?: continue
            case .shortWrite?: limit = 1
            case nil: break
            }
            let written = contents.withUnsafeBytes { bytes in
                systemWrite(descriptor, bytes.baseAddress! + offset, limit)
            }
            if written < 0 {
                if errno == EINTR { continue }
                throw Self.failure("write \(name)", errno)
            }
            guard written > 0 else { throw ShareRecoveryError(.storageFailure, "write \(name): no progress") }
            offset += written
        }
    }

    /// Runs one system call through the fault hook, retrying on `EINTR`.
    /// - Returns: The call's non-negative result, or its negative result when errno is `tolerating`.
    private func call<R: BinaryInteger>(
        _ step: StoreIOStep, _ action: String, tolerating tolerated: Int32? = nil, _ body: () -> R
    ) throws(ShareRecoveryError) -> R {
        while true {
            switch faultHook?(step) {
            case .fail(let code)?: throw Self.failure(action, code)
            case .interrupt?: continue
            case .shortWrite?, nil: break
            }
            let result = body()
            if result >= 0 { return result }
            let code = errno
            if code == EINTR { continue }
            if code == tolerated { return result }
            throw Self.failure(action, code)
        }
    }

    private static func retrying<R: BinaryInteger>(_ body: () -> R) -> R {
        while true {
            let result = body()
            if result >= 0 || errno != EINTR { return result }
        }
    }

    /// A `storageFailure` naming the action and the errno text.
    static func failure(_ action: String, _ code: Int32) -> ShareRecoveryError {
        ShareRecoveryError(.storageFailure, "\(action): \(String(cString: strerror(code))) (errno \(code))")
    }
}

// The C calls whose Swift names collide with this type's methods, reached by module-qualified names.
#if canImport(Glibc)
private func systemRead(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
    Glibc.read(descriptor, buffer, count)
}
private func systemWrite(_ descriptor: Int32, _ buffer: UnsafeRawPointer?, _ count: Int) -> Int {
    Glibc.write(descriptor, buffer, count)
}
private func systemRename(_ from: String, _ to: String) -> Int32 { Glibc.rename(from, to) }
#elseif canImport(Darwin)
private func systemRead(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
    Darwin.read(descriptor, buffer, count)
}
private func systemWrite(_ descriptor: Int32, _ buffer: UnsafeRawPointer?, _ count: Int) -> Int {
    Darwin.write(descriptor, buffer, count)
}
private func systemRename(_ from: String, _ to: String) -> Int32 { Darwin.rename(from, to) }
#endif
