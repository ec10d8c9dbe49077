//! The `Server` header on every response, so a run's provenance records what was measured: this peer, the
//! JAX-WS RI's version and the JVM's.
package dev.wsbench.peer.jaxws;

import com.sun.net.httpserver.Filter;
import com.sun.net.httpserver.HttpExchange;
import com.sun.xml.ws.util.RuntimeVersion;
import java.io.IOException;

/** Sets the header before the exchange reaches the service or the next filter. */
final class ServerHeader extends Filter {
    /**
     * Computed once: a response pays only the header's bytes. The RI names itself ("JAX-WS RI 2.3.0.2", "XML-WS
     * Runtime 4.0.5"), followed by its source revision (unexpanded in Debian's build), dropped here.
     */
    static final String VALUE = "wsbench-jaxws (" + RuntimeVersion.VERSION.toString().replaceFirst(" (svn|git)-revision.*", "")
            + "; Java " + Runtime.version() + ")";

    @Override
    public void doFilter(HttpExchange ex, Chain chain) throws IOException {
        ex.getResponseHeaders().set("Server", VALUE);
        chain.doFilter(ex);
    }

    @Override
    public String description() {
        return "Server: " + VALUE;
    }
}
