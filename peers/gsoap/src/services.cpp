//! The service operations soapcpp2 declared from the WSDLs: each echoes what gSOAP deserialised from the
//! request, which gSOAP serialises again into the response; the Customer operations use the bounded store.
#include <string>

#include "peer.h"
#include "store.h"

namespace {

peer::Worker& worker(struct soap* soap) { return *static_cast<peer::Worker*>(soap->user); }

/// gSOAP dispatches on the Body's element alone; bench-server serves each service only at its own path.
bool at(const struct soap* soap, const char* path) {
    const std::string_view full(soap->path);
    return full.substr(0, full.find('?')) == path;
}

int wrong_path(struct soap* soap) {
    return soap_sender_fault(soap, "this operation is not served at this path; see / for the endpoints", nullptr);
}

/// gSOAP 2.8.124 takes a QName with an undeclared prefix (it binds it to the empty namespace, and then writes
/// the illegal `xmlns:_0=""`), and one with an empty or colon-holding local part: each is refused here, as
/// bench-server refuses them. gSOAP holds a parsed QName as `"uri":local` or `prefix:local` (prefix from the
/// namespace table) or `local`.
bool valid_qname(const std::string& q) {
    std::size_t local = 0;
    if (!q.empty() && q[0] == '"') {
        const std::size_t close = q.find('"', 1);
        if (close == std::string::npos || close == 1 || close + 1 >= q.size() || q[close + 1] != ':') {
            return false;
        }
        local = close + 2;
    } else if (const std::size_t colon = q.find(':'); colon != std::string::npos) {
        local = colon + 1;
    }
    return local < q.size() && q.find(':', local) == std::string::npos;
}

/// The request's customers, copied out of gSOAP's per-request memory into the store's.
std::vector<peer::CustomerPtr> detach_all(const cust__CustomerArray& in) {
    std::vector<peer::CustomerPtr> out;
    out.reserve(in.customer.size());
    for (const cust__Customer* c : in.customer) {
        if (c) {
            out.push_back(peer::detach(*c));
        }
    }
    return out;
}

}  // namespace

int __perf__echoStringDoc(struct soap* soap, _cxf__echoStringDoc* req, _cxf__echoStringDocResponse& resp) {
    if (!at(soap, peer::CXF_PATH)) {
        return wrong_path(soap);
    }
    resp.out = req->in;
    return SOAP_OK;
}

int __perf__echoBase64Doc(struct soap* soap, _cxf__echoBase64Doc* req, _cxf__echoBase64DocResponse& resp) {
    if (!at(soap, peer::CXF_PATH)) {
        return wrong_path(soap);
    }
    resp.out = req->in;
    return SOAP_OK;
}

int __perf__echoComplexTypeDoc(struct soap* soap, _cxf__echoComplexTypeDoc* req,
                               _cxf__echoComplexTypeDocResponse& resp) {
    if (!at(soap, peer::CXF_PATH)) {
        return wrong_path(soap);
    }
    for (const cxf__NestedComplexType* item : req->in ? req->in->item : std::vector<cxf__NestedComplexType*>()) {
        if (item && !valid_qname(item->varQName)) {
            return soap_sender_fault(soap, "echoComplexTypeDoc/in/item/varQName: not a QName with a declared prefix",
                                     nullptr);
        }
    }
    resp.return_ = req->in;
    resp.idout = req->id;
    return SOAP_OK;
}

int __cust__add(struct soap* soap, cust__CustomerArray* req, _cust__addResponse& resp) {
    if (!at(soap, peer::CUSTOMER_PATH)) {
        return wrong_path(soap);
    }
    const auto& in = req->customer;
    resp.count = static_cast<unsigned int>(in.size());
    resp.firstId = in.empty() || !in.front() ? 0 : in.front()->id;
    resp.lastId = in.empty() || !in.back() ? 0 : in.back()->id;
    resp.stored = worker(soap).store->add(detach_all(*req));
    return SOAP_OK;
}

int __cust__addAsync(struct soap* soap, cust__CustomerArray* req) {
    if (!at(soap, peer::CUSTOMER_PATH)) {
        return wrong_path(soap);
    }
    worker(soap).store->add(detach_all(*req));
    // A one-way operation: HTTP 202 Accepted and no body (gSOAP's documented way to answer one over HTTP).
    return soap_send_empty_response(soap, SOAP_OK);
}

int __cust__get(struct soap* soap, _cust__get* req, cust__CustomerArray& resp) {
    if (!at(soap, peer::CUSTOMER_PATH)) {
        return wrong_path(soap);
    }
    if (req->count > peer::MAX_GET) {
        const std::string why = "get: count " + std::to_string(req->count) +
                                " is more than this server returns at once (" + std::to_string(peer::MAX_GET) + ")";
        return soap_sender_fault(soap, soap_strdup(soap, why.c_str()), nullptr);
    }
    // The response points at the stored customers themselves; the worker keeps them alive until it is sent.
    auto& pinned = worker(soap).pinned;
    const std::size_t first = pinned.size();
    worker(soap).store->get(req->count, req->offset, pinned);
    resp.customer.reserve(pinned.size() - first);
    for (std::size_t i = first; i < pinned.size(); i++) {
        resp.customer.push_back(const_cast<cust__Customer*>(pinned[i].get()));
    }
    return SOAP_OK;
}

int __cust__echo(struct soap* soap, cust__CustomerArray* req, cust__CustomerArray& resp) {
    if (!at(soap, peer::CUSTOMER_PATH)) {
        return wrong_path(soap);
    }
    resp.customer = req->customer;
    return SOAP_OK;
}
