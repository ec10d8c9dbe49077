//! `wsbench-jaxws`: the CXF performance and Customer services on the JAX-WS RI (Metro), published on the JDK's
//! HTTP server with a fixed pool of worker threads; prints bench-server's `READY …` line and stops on
//! SIGINT/SIGTERM (exit 0).
package dev.wsbench.peer.jaxws;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.logging.Level;
import java.util.logging.Logger;

import javax.xml.ws.Endpoint;
import javax.xml.ws.WebServiceFeature;

import com.sun.net.httpserver.HttpContext;
import com.sun.net.httpserver.HttpServer;
import com.sun.xml.ws.developer.SchemaValidationFeature;

import dev.wsbench.peer.CustomerStore;

/** Binds, publishes both services, announces READY, and serves until a signal. */
public final class Main {
    /**
     * Metro logs every request that fails schema validation with a stack trace (WARNING): a stream of bad
     * requests would fill the log without bound, so only its SEVERE messages are kept. (Held here: a logger
     * nobody references may be collected, and its level with it.)
     */
    private static final Logger METRO = Logger.getLogger("com.sun.xml.ws");

    private Main() {}

    public static void main(String[] args) throws Exception {
        Flags flags = Flags.parse(args);
        METRO.setLevel(Level.SEVERE);
        // No JMX monitoring of the endpoints (gmbal): Debian's jaxws-rt.jar does not list the glassfish-pfl
        // jars it needs, and a benchmark wants none of its cost.
        System.setProperty("com.sun.xml.ws.monitoring.endpoint", "false");
        // TCP_NODELAY on accepted connections: the JDK server writes a response's head and body separately,
        // and without it Nagle's algorithm holds the body until the client's delayed ACK (40 ms a call).
        System.setProperty("sun.net.httpserver.nodelay", "true");
        // bench-server's bounds on slow peers (the JDK server has none by default, so a client that sends its
        // request slowly, or never reads the answer, would hold a worker for ever): 30 s to receive a request,
        // 30 s to send a response, 60 s idle between requests (seconds; checked once a second).
        System.setProperty("sun.net.httpserver.maxReqTime", "30");
        System.setProperty("sun.net.httpserver.maxRspTime", "30");
        System.setProperty("sun.net.httpserver.idleInterval", "60");
        // SAAJ's own name for its factory (the RI's deprecated lookup otherwise warns at start).
        System.setProperty("javax.xml.soap.SAAJMetaFactory", "com.sun.xml.messaging.saaj.soap.SAAJMetaFactoryImpl");
        ExecutorService pool = Executors.newFixedThreadPool(flags.workers, workerThreads());
        HttpServer server = HttpServer.create(flags.http, flags.backlog);
        server.setExecutor(pool);
        CustomerStore store = new CustomerStore(flags.storeCap, flags.storePrefill);
        publish(server, PerfServiceImpl.PATH, new PerfServiceImpl(), "wsdl/cxf.wsdl", flags);
        publish(server, CustomerServiceImpl.PATH, new CustomerServiceImpl(store), "wsdl/customer.wsdl", flags);
        server.createContext("/", new Plain()).getFilters().add(new ServerHeader());
        server.start();

        // Installed before READY: a signal sent right after READY must stop the server, not kill it. The JVM
        // runs shutdown hooks on SIGINT/SIGTERM; halting from the hook makes the exit status 0, as
        // bench-server's (the harness treats any other status after SIGTERM as a failure).
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            server.stop(1);
            pool.shutdown();
            try {
                pool.awaitTermination(5, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            Runtime.getRuntime().halt(0);
        }, "stop"));

        InetSocketAddress bound = server.getAddress();
        String host = bound.getAddress().getHostAddress();
        if (host.contains(":")) {
            host = "[" + host + "]";
        }
        System.out.println("READY http=" + host + ":" + bound.getPort() + " workers=" + flags.workers
                + " pid=" + ProcessHandle.current().pid());
        System.out.flush();
    }

    /**
     * Publishes {@code impl} (whose @WebService names its WSDL) at {@code path}, behind {@link SoapFront}. With
     * schema validation every request is checked against the WSDL's schema before JAXB binds it, so a wrong
     * value gets a Client fault; without it JAXB binds leniently (a non-number becomes 0, an unknown
     * enumeration value null, a missing element its default) and the service echoes what it made of it.
     */
    private static void publish(HttpServer server, String path, Object impl, String wsdl, Flags flags)
            throws IOException {
        HttpContext context = server.createContext(path);
        context.getFilters().add(new ServerHeader());
        context.getFilters().add(new SoapFront(path, resource(wsdl), flags.maxBody));
        WebServiceFeature[] features = flags.schemaValidation
                ? new WebServiceFeature[] {new SchemaValidationFeature(true, false)}
                : new WebServiceFeature[0];
        Endpoint.create(impl, features).publish(context);
    }

    private static String resource(String name) throws IOException {
        try (InputStream in = Main.class.getClassLoader().getResourceAsStream(name)) {
            if (in == null) {
                throw new IOException(name + " is not in the jar (see peers/README.md: the build copies it)");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    private static ThreadFactory workerThreads() {
        AtomicInteger n = new AtomicInteger();
        return r -> {
            Thread t = new Thread(r, "worker-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
    }
}
