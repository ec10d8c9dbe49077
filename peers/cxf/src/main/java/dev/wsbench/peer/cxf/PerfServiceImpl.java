//! The CXF performance service's DocPortType on Apache CXF: each operation echoes what JAXB unmarshalled from the
//! request, which JAXB marshals again into the response.
package dev.wsbench.peer.cxf;

import jakarta.jws.WebService;
import jakarta.xml.ws.Holder;

import dev.wsbench.peer.perf.DocPortType;
import dev.wsbench.peer.perf.NestedComplexTypeSeq;

/** Implements the wsdl2java-generated service endpoint interface against the project's WSDL. */
@WebService(
        serviceName = "PerfService",
        portName = "SoapHttpDocLitPort",
        targetNamespace = "http://cxf.apache.org/cxf/performance",
        endpointInterface = "dev.wsbench.peer.perf.DocPortType",
        wsdlLocation = "classpath:wsdl/cxf.wsdl")
public class PerfServiceImpl implements DocPortType {
    /** Where bench-server and the CXF sample serve it. */
    static final String PATH = "/cxf-benchmark-soapdoclit/services/SoapHttpDocLitPort";

    @Override
    public String echoStringDoc(String in) {
        return in;
    }

    @Override
    public byte[] echoBase64Doc(byte[] in) {
        return in;
    }

    @Override
    public NestedComplexTypeSeq echoComplexTypeDoc(NestedComplexTypeSeq in, int id, Holder<Integer> idout) {
        idout.value = id;
        return in;
    }
}
