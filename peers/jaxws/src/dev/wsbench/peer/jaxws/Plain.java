//! The non-SOAP endpoints bench-server has and the harness uses: `GET /` (the connection-churn scenarios'
//! plain HTTP GET) and `GET /health`; 404 elsewhere.
package dev.wsbench.peer.jaxws;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpHandler;

/** The handler of every path no service context claims. */
final class Plain implements HttpHandler {
    private static final String INDEX = "wsbench peer: JAX-WS RI (Metro)\n"
            + "POST " + PerfServiceImpl.PATH + "   CXF performance service (WSDL: ?wsdl)\n"
            + "POST " + CustomerServiceImpl.PATH + "                               Customer service (WSDL: ?wsdl)\n"
            + "GET  /health                                                 liveness\n";

    @Override
    public void handle(HttpExchange ex) throws IOException {
        String path = ex.getRequestURI().getPath();
        boolean known = path.equals("/") || path.equals("/health");
        if (!known) {
            send(ex, 404, "text/plain; charset=utf-8", "not found; see / for the endpoints\n");
        } else if (!ex.getRequestMethod().equals("GET")) {
            ex.getResponseHeaders().set("Allow", "GET");
            send(ex, 405, "text/plain; charset=utf-8", "method not allowed\n");
        } else {
            send(ex, 200, "text/plain; charset=utf-8", path.equals("/") ? INDEX : "ok\n");
        }
    }

    /**
     * Sends a whole small response. An unread request body is the JDK server's to drain when the exchange
     * closes (it reads at most sun.net.httpserver.drainAmount, 64 KiB by default, then closes the connection).
     */
    static void send(HttpExchange ex, int status, String type, String body) throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        ex.getResponseHeaders().set("Content-Type", type);
        ex.sendResponseHeaders(status, bytes.length == 0 ? -1 : bytes.length);
        try (OutputStream out = ex.getResponseBody()) {
            out.write(bytes);
        }
    }

    /**
     * The authority the client used (Host header), so a WSDL's soap:address points back the way it came; the
     * listener's address if the header is absent or has characters that do not belong in a host.
     */
    static String authority(HttpExchange ex) {
        String host = ex.getRequestHeaders().getFirst("Host");
        if (host != null && !host.isEmpty() && host.chars().allMatch(Plain::hostChar)) {
            return host;
        }
        return ex.getLocalAddress().getAddress().getHostAddress() + ":" + ex.getLocalAddress().getPort();
    }

    private static boolean hostChar(int c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
                || c == '.' || c == '-' || c == ':' || c == '[' || c == ']';
    }
}
