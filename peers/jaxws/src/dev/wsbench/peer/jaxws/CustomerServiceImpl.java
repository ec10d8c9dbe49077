//! The Customer service on the JAX-WS RI: add / addAsync into the bounded store, get from it, echo.
package dev.wsbench.peer.jaxws;

import java.math.BigInteger;
import java.util.List;

import javax.jws.WebService;
import javax.xml.namespace.QName;
import javax.xml.soap.SOAPConstants;
import javax.xml.soap.SOAPException;
import javax.xml.soap.SOAPFactory;
import javax.xml.soap.SOAPFault;
import javax.xml.ws.Holder;
import javax.xml.ws.soap.SOAPFaultException;

import dev.wsbench.peer.CustomerStore;
import dev.wsbench.peer.customer.Customer;
import dev.wsbench.peer.customer.CustomerPortType;

/** Implements the wsimport-generated service endpoint interface against the project's WSDL. */
@WebService(
        serviceName = "CustomerService",
        portName = "CustomerPort",
        targetNamespace = "http://wsbench.dev/customer",
        endpointInterface = "dev.wsbench.peer.customer.CustomerPortType",
        wsdlLocation = "wsdl/customer.wsdl")
public class CustomerServiceImpl implements CustomerPortType {
    static final String PATH = "/services/CustomerService";
    /** Most customers one get returns (bench-server's bound: about 10 MB of XML). */
    static final long MAX_GET = 20_000;

    private final CustomerStore store;

    public CustomerServiceImpl(CustomerStore store) {
        this.store = store;
    }

    @Override
    public void add(List<Customer> customer, Holder<Long> count, Holder<BigInteger> firstId,
            Holder<BigInteger> lastId, Holder<BigInteger> stored) {
        long held = store.add(customer);
        count.value = (long) customer.size();
        firstId.value = customer.isEmpty() ? BigInteger.ZERO : customer.get(0).getId();
        lastId.value = customer.isEmpty() ? BigInteger.ZERO : customer.get(customer.size() - 1).getId();
        stored.value = BigInteger.valueOf(held);
    }

    @Override
    public void addAsync(List<Customer> customer) {
        store.add(customer);
    }

    @Override
    public List<Customer> get(long count, BigInteger offset) {
        if (count > MAX_GET) {
            throw clientFault("get: count " + count + " is more than this server returns at once (" + MAX_GET + ")");
        }
        return store.get((int) count, offset);
    }

    @Override
    public void echo(Holder<List<Customer>> customer) {
        // INOUT: the unmarshalled customers are marshalled back as the response.
    }

    /** A SOAP 1.1 fault with code soap:Client (the sender must change the message). */
    static SOAPFaultException clientFault(String message) {
        try {
            SOAPFault fault = SOAPFactory.newInstance().createFault(message,
                    new QName(SOAPConstants.URI_NS_SOAP_1_1_ENVELOPE, "Client"));
            return new SOAPFaultException(fault);
        } catch (SOAPException e) {
            throw new IllegalStateException("SAAJ cannot build a fault", e);
        }
    }
}
