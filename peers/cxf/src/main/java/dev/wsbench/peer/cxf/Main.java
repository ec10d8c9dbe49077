//! `wsbench-cxf`: the CXF performance and Customer services on Apache CXF's JAX-WS frontend, published on CXF's
//! Jetty transport (StAX by Woodstox, JAXB binding: CXF's defaults); prints bench-server's `READY …` line and
//! stops on SIGINT/SIGTERM (exit 0).
package dev.wsbench.peer.cxf;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.logging.Level;
import java.util.logging.Logger;

import org.apache.cxf.Bus;
import org.apache.cxf.BusFactory;
import org.apache.cxf.jaxws.EndpointImpl;
import org.apache.cxf.transport.http_jetty.JettyHTTPServerEngine;
import org.apache.cxf.transport.http_jetty.JettyHTTPServerEngineFactory;
import org.apache.cxf.transport.http_jetty.ThreadingParameters;
import org.apache.cxf.version.Version;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;

import dev.wsbench.peer.CustomerStore;

/** Binds, publishes both services, announces READY, and serves until a signal. */
public final class Main {
    /**
     * CXF logs every fault (a bad request) and Jetty every odd connection: a stream of bad requests would fill
     * the log without bound, so only SEVERE messages are kept (CXF), WARNING (Jetty, through slf4j-jdk14). Held
     * here: a logger nobody references may be collected, and its level with it.
     */
    private static final Logger CXF = Logger.getLogger("org.apache.cxf");
    private static final Logger JETTY = Logger.getLogger("org.eclipse.jetty");

    /** What this server says of itself in every response's {@code Server} header. */
    static final String SERVER = "wsbench-cxf (Apache CXF " + Version.getCurrentVersion() + "; Jetty "
            + Server.getVersion() + "; Java " + Runtime.version() + ")";

    private Main() {}

    public static void main(String[] args) throws Exception {
        Flags flags = Flags.parse(args);
        CXF.setLevel(Level.SEVERE);
        JETTY.setLevel(Level.WARNING);
        Bus bus = BusFactory.getDefaultBus();
        InetSocketAddress at = flags.http;
        String host = at.getAddress().getHostAddress();
        if (host.contains(":")) {
            host = "[" + host + "]";
        }
        JettyHTTPServerEngine engine = engine(bus, flags, host);
        CustomerStore store = new CustomerStore(flags.storeCap, flags.storePrefill);
        String base = "http://" + host + ":" + at.getPort();
        publish(bus, base + PerfServiceImpl.PATH, new PerfServiceImpl(), flags);
        publish(bus, base + CustomerServiceImpl.PATH, new CustomerServiceImpl(store), flags);
        Server server = engine.getServer();

        // Installed before READY: a signal sent right after READY must stop the server, not kill it. The JVM
        // runs shutdown hooks on SIGINT/SIGTERM; halting from the hook makes the exit status 0, as
        // bench-server's (the harness treats any other status after SIGTERM as a failure). In-flight requests
        // get up to 5 s (Jetty's graceful stop), as bench-server's grace.
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                server.setStopTimeout(5_000);
                server.stop();
            } catch (Exception e) {
                System.err.println("wsbench-cxf: stopping Jetty: " + e);
            }
            Runtime.getRuntime().halt(0);
        }, "stop"));

        int port = ((ServerConnector) engine.getConnector()).getLocalPort();
        System.out.println("READY http=" + host + ":" + port + " workers=" + flags.workers + " pid="
                + ProcessHandle.current().pid());
        System.out.flush();
    }

    /**
     * CXF's Jetty engine for the listen address, as CXF would make it for the first endpoint published there,
     * with the front handler ahead of CXF's contexts, the pool sized by {@code --workers} when given, and
     * Jetty's own Server header off (Front sends ours).
     */
    private static JettyHTTPServerEngine engine(Bus bus, Flags flags, String host) throws Exception {
        JettyHTTPServerEngineFactory factory = bus.getExtension(JettyHTTPServerEngineFactory.class);
        JettyHTTPServerEngine engine = factory.createJettyHTTPServerEngine(
                flags.http.getAddress().getHostAddress(), flags.http.getPort(), "http");
        engine.setSendServerVersion(false);
        if (flags.workers > 0) {
            ThreadingParameters threads = new ThreadingParameters();
            threads.setMinThreads(flags.workers);
            threads.setMaxThreads(flags.workers);
            engine.setThreadingParameters(threads);
        }
        Map<String, String> wsdls = new HashMap<>();
        wsdls.put(PerfServiceImpl.PATH, resource("wsdl/cxf.wsdl"));
        wsdls.put(CustomerServiceImpl.PATH, resource("wsdl/customer.wsdl"));
        engine.setHandlers(List.of(new Front(SERVER, wsdls, flags.maxBody)));
        return engine;
    }

    /**
     * Publishes {@code impl} (whose @WebService names its WSDL) at {@code address}. With schema validation every
     * request is checked against the WSDL's schema as it is read, so a wrong value gets a Client fault; without
     * it JAXB binds leniently (a non-number becomes 0, an unknown enumeration value null, a missing element its
     * default) and the service echoes what it made of it.
     */
    private static void publish(Bus bus, String address, Object impl, Flags flags) {
        EndpointImpl endpoint = new EndpointImpl(bus, impl);
        Map<String, Object> properties = new HashMap<>();
        properties.put("schema-validation-enabled", flags.schemaValidation ? "IN" : "NONE");
        endpoint.setProperties(properties);
        endpoint.getInInterceptors().add(new BodyBound(flags.maxBody));
        endpoint.publish(address);
    }

    private static String resource(String name) throws IOException {
        try (InputStream in = Main.class.getClassLoader().getResourceAsStream(name)) {
            if (in == null) {
                throw new IOException(name + " is not in the jar (see peers/README.md: the build copies it)");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }
}
