@testable import CofferOrchestrate
import Foundation
import Testing

@Suite("Request")
struct RequestTests {
    @Test("a form: fields in name order, & = + % and non-ASCII escaped, a space as +; POST with its length")
    func form() {
        #expect(Request.formEncoded(["b": "x y", "a": "1&2=3+4%", "é": "ü"]) == "a=1%262%3D3%2B4%25&b=x+y&%C3%A9=%C3%BC")
        let request = Request()
        request.url("https://op.example.com/token")
        request.form(formData: ["grant_type": "refresh_token"])
        #expect(request.getMethod() == "POST")
        #expect(request.urlRequest.value(forHTTPHeaderField: "Content-Type") == "application/x-www-form-urlencoded")
        #expect(request.urlRequest.value(forHTTPHeaderField: "Content-Length") == "24")
    }

    @Test("a query parameter with + and & keeps them; the URL set twice keeps one Content-Type")
    func query() {
        let request = Request()
        request.url("https://op.example.com/authorize")
        request.url("https://op.example.com/authorize")
        request.parameter(name: "state", value: "a+b&c")
        let items = URLComponents(url: request.urlRequest.url!, resolvingAgainstBaseURL: false)?.queryItems
        #expect(items?.first?.value == "a+b&c")
        #expect(request.urlRequest.url?.absoluteString.contains("a%2Bb%26c") == true)
        #expect(request.urlRequest.value(forHTTPHeaderField: "Content-Type") == "application/json")
    }

    @Test("a log line shows the URL without its query, user or password")
    func shownURL() {
        #expect(HttpClient.shown(URL(string: "https://u:p@op.example.com/token?code=secret#x")) == "https://op.example.com/token")
    }
}
