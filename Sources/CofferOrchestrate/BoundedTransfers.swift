import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Why an exchange was cut short by the limits ``HttpClient`` sets.
public enum HttpClientError: Error, Sendable, Equatable, LocalizedError {
    /// The answer was larger than ``HttpClient/responseSizeLimit``; it was not read further.
    case responseTooLarge(limit: Int)
    /// The whole exchange took longer than ``HttpClient/timeoutIntervalForRequest``.
    case deadlineExceeded(seconds: Int)

    /// What happened, for a person.
    public var errorDescription: String? {
        switch self {
        case .responseTooLarge(let limit): "The server's answer is larger than \(limit) bytes; it was not read"
        case .deadlineExceeded(let seconds): "The server did not answer completely within \(seconds) s"
        }
    }
}

/// The delegate of ``HttpClient``'s own session: it refuses redirects, and reads each answer into
/// memory only up to a size limit, cancelling the transfer past it (a broken or hostile server
/// sending gigabytes is cut off at the limit, not after it has filled the memory).
final class BoundedTransfers: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    // @unchecked Sendable: `transfers` is read and written only while `lock` is held; each
    // continuation is resumed once, by whoever removes its transfer.
    private struct Transfer {
        var data = Data()
        var response: URLResponse?
        let limit: Int
        let continuation: CheckedContinuation<(Data, URLResponse), any Error>
    }

    private let lock = NSLock()
    private var transfers: [Int: Transfer] = [:]

    /// Sends `request` on `session` (whose delegate is this object) and returns the answer, or
    /// throws once `limit` bytes are passed or `deadline` seconds are up.
    func send(_ request: URLRequest, on session: URLSession, limit: Int, deadline: TimeInterval) async throws -> (Data, URLResponse) {
        let task = session.dataTask(with: request)
        let id = task.taskIdentifier
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                lock.withLock { transfers[id] = Transfer(limit: limit, continuation: continuation) }
                task.resume()
                DispatchQueue.global().asyncAfter(deadline: .now() + deadline) { [weak self, weak task] in
                    guard let self, self.finish(id, .failure(HttpClientError.deadlineExceeded(seconds: Int(deadline)))) else { return }
                    task?.cancel()
                }
            }
        } onCancel: {
            if finish(id, .failure(CancellationError())) { task.cancel() }
        }
    }

    /// Resumes the transfer's caller with `result`; `false` when it was already resumed.
    @discardableResult
    private func finish(_ id: Int, _ result: Result<(Data, URLResponse), any Error>) -> Bool {
        guard let transfer = lock.withLock({ transfers.removeValue(forKey: id) }) else { return false }
        transfer.continuation.resume(with: result)
        return true
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                    completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void) {
        let id = dataTask.taskIdentifier
        let tooLarge: Int? = lock.withLock {
            transfers[id]?.response = response
            guard let limit = transfers[id]?.limit, response.expectedContentLength > Int64(limit) else { return nil }
            return limit
        }
        if let tooLarge {
            finish(id, .failure(HttpClientError.responseTooLarge(limit: tooLarge)))
            completionHandler(.cancel)
        } else {
            completionHandler(.allow)
        }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        let id = dataTask.taskIdentifier
        let tooLarge: Int? = lock.withLock {
            guard transfers[id] != nil else { return nil }
            transfers[id]!.data.append(data)
            return transfers[id]!.data.count > transfers[id]!.limit ? transfers[id]!.limit : nil
        }
        if let tooLarge {
            finish(id, .failure(HttpClientError.responseTooLarge(limit: tooLarge)))
            dataTask.cancel()
        }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        let id = task.taskIdentifier
        let done: (Data, URLResponse?)? = lock.withLock { transfers[id].map { ($0.data, $0.response ?? task.response) } }
        if let error {
            finish(id, .failure(error))
        } else if let (data, response) = done, let response {
            finish(id, .success((data, response)))
        } else {
            finish(id, .failure(URLError(.badServerResponse)))
        }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
                    newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void) {
        completionHandler(nil)
    }
}
