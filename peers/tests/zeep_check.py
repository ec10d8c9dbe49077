#!/usr/bin/env python3
"""zeep_check.py: a third-party SOAP client (zeep) calls every operation of the CXF performance and Customer
services on each server given, from the WSDL the server itself serves, and checks every value it gets back.

    zeep_check.py [--reference URL] URL [URL ...]     check each server (base URLs, e.g. http://127.0.0.1:8080)
    zeep_check.py --self-test URL                      show that a wrong answer fails: check URL through a proxy
                                                       that changes one value in each kind of response

With --reference (bench-server), `get` must answer the very customers the reference answers (the peers pre-fill
their stores with bench-proto's generator, ported): give it servers started for the check, whose stores still
hold their first 1,000 customers (each check adds 6). Exit status 0 when every check passed, 1 otherwise; each
failure names the server, the operation, the field path, and the expected and received values. Needs zeep
(Debian: python3-zeep, run with /usr/bin/python3; or `pip install zeep`).
"""

import argparse
import datetime
import decimal
import http.server
import struct
import sys
import threading

import lxml.etree as etree
import requests
import zeep
import zeep.exceptions
import zeep.helpers

CXF_PATH = "/cxf-benchmark-soapdoclit/services/SoapHttpDocLitPort"
CUSTOMER_PATH = "/services/CustomerService"
SOAP_ENV = "http://schemas.xmlsoap.org/soap/envelope/"
UTC = datetime.timezone.utc


class Failures:
    """The failed checks of one run, printed as they happen."""

    def __init__(self):
        self.items = []

    def check(self, where, expected, got):
        if expected != got:
            self.items.append(where)
            print(f"FAIL {where}: expected {expected!r}, got {got!r}")
            return False
        return True

    def fail(self, where, why):
        self.items.append(where)
        print(f"FAIL {where}: {why}")


def f32(x):
    """A float as the xsd:float (IEEE single) it stands for."""
    return struct.unpack("<f", struct.pack("<f", x))[0]


def compare(failures, where, expected, got):
    """Field-by-field comparison of zeep values (dicts and lists from serialize_object), naming the path."""
    if isinstance(expected, dict):
        if not isinstance(got, dict):
            return failures.check(where, expected, got)
        ok = True
        for key in expected:
            ok &= compare(failures, f"{where}/{key}", expected[key], got.get(key))
        return ok
    if isinstance(expected, list):
        if not isinstance(got, list) or len(got) != len(expected):
            return failures.check(f"{where} (length)", len(expected), len(got) if isinstance(got, list) else got)
        ok = True
        for i, (e, g) in enumerate(zip(expected, got)):
            ok &= compare(failures, f"{where}[{i}]", e, g)
        return ok
    if isinstance(expected, etree.QName):
        return failures.check(where, expected.text, got)
    return failures.check(where, expected, got)


def plain(obj):
    return zeep.helpers.serialize_object(obj, target_cls=dict)


# zeep turns a QName's text into an lxml QName without resolving its prefix (and fails on `p:local`): keep the
# text, and resolve it against the raw answer (received_qnames).
zeep.xsd.types.builtins.QName.pythonvalue = lambda self, value: value


def received_customer(c):
    """zeep reads an empty string element (`<region></region>`) and an empty `<tags/>` as None."""
    c = dict(c)
    if c.get("tags") is None:
        c["tags"] = {"tag": []}
    if isinstance(c.get("address"), dict) and c["address"].get("region") is None:
        c["address"] = dict(c["address"], region="")
    return c


# --- CXF performance service -------------------------------------------------------------------------------

RAMP = bytes((b - 128) % 256 for b in range(256))


def cxf_item(n):
    """The CXF client's reference item (bench-proto's reference_item) when n == 0, varied otherwise."""
    return {
        "varString": "#12345ABc" if n == 0 else f"item {n}: Łódź & <Zoë>",
        "varUByte": 255 - n,
        "varUnsignedLong": 13691056728 + n,
        "varFloat": f32(3.4028234663852886e38) if n == 0 else f32(1.5 * n),
        "varQName": etree.QName("http://cxf.apache.org", "return" if n == 0 else f"r{n}"),
        "varBase64Binary": RAMP,
        "varHexBinary": RAMP.hex().upper(),
        "varStruct": {
            "varFloat": f32(3.4028234663852886e38) if n == 0 else f32(-0.25 * n),
            "varShort": 32767 - n,
            "varString": "1234567890!@#$%^&*()abcdefghijk",
            "varByte": 127 - n,
            "varDecimal": decimal.Decimal("3.1415926") if n == 0 else decimal.Decimal(f"-{n}.50"),
            "varDouble": sys.float_info.max if n == 0 else 1e-300 * n,
            "varDateTime": datetime.datetime(2005, 12, 3, 0, 0, 9, tzinfo=UTC)
            if n == 0
            else datetime.datetime(2020, 2, 29, 23, 59, 58, 125000, tzinfo=datetime.timezone(datetime.timedelta(hours=2))),
            "varAttrString": "1234567890!@#$%^&*()abcdefghijk" if n == 0 else f'"quoted" & {n}',
        },
        "varEnum": ["RED", "GREEN", "BLUE"][n % 3],
    }


def normalise_item(item):
    """A received item with its floats read as the xsd:float values they are."""
    item = dict(item)
    item["varFloat"] = f32(item["varFloat"]) if item["varFloat"] is not None else None
    item["varHexBinary"] = (item["varHexBinary"] or "").upper()
    s = dict(item["varStruct"] or {})
    s["varFloat"] = f32(s["varFloat"]) if s.get("varFloat") is not None else None
    item["varStruct"] = s
    return item


def received_qnames(client, sent, id_):
    """The varQName values of an echoComplexTypeDoc answer, resolved against the answer's own namespace
    declarations (zeep reads a QName's text without its prefix's binding, so the raw answer is read here)."""
    with client.settings(raw_response=True):
        r = client.service.echoComplexTypeDoc(**{"in": {"item": sent}, "id": id_})
    root = etree.fromstring(r.content)
    out = []
    for el in root.iter("{http://cxf.apache.org/cxf/performance/types}varQName"):
        prefix, _, local = (el.text or "").strip().rpartition(":")
        out.append(etree.QName(el.nsmap.get(prefix or None), local).text)
    return out


def check_cxf(failures, base):
    where = f"{base} cxf"
    client = zeep.Client(f"{base}{CXF_PATH}?wsdl")
    text = "echo: ÀÉÎ Łódź 東京 <&> \"'\n\ttabs"
    failures.check(f"{where} echoStringDoc", text, client.service.echoStringDoc(text))
    failures.check(f"{where} echoBase64Doc", RAMP * 4, client.service.echoBase64Doc(RAMP * 4))
    for count in (1, 3):
        sent = [cxf_item(n) for n in range(count)]
        got = client.service.echoComplexTypeDoc(**{"in": {"item": sent}, "id": 40 + count})
        got = plain(got)
        failures.check(f"{where} echoComplexTypeDoc/idout", 40 + count, got.get("idout"))
        items = [normalise_item(i) for i in (got.get("return") or {}).get("item") or []]
        qnames = received_qnames(client, sent, 40 + count)
        for item, qname in zip(items, qnames):
            item["varQName"] = qname
        compare(failures, f"{where} echoComplexTypeDoc/return/item", sent, items)


# --- Customer service ---------------------------------------------------------------------------------------


def customer(n):
    """Customers covering the schema: unicode and markup characters, notes or none, no tags or several,
    negative and zero-padded balances, fractions of a second and a non-UTC offset."""
    return {
        "id": 9_000_000_000 + n,
        "firstName": ["Zoë", "Søren", "Łukasz"][n % 3],
        "lastName": "O'Brien & <Sons>",
        "email": f"c{n}@example.test",
        "phone": "+48 12 345 6789",
        "company": "Fernández Logistics GmbH",
        "address": {"street": f"{n} Harbour Road", "city": "Kraków", "region": "Małopolskie" if n % 2 else "",
                    "postalCode": "30-001", "country": "PL"},
        "created": datetime.datetime(2012 + n, 1 + n % 12, 1 + n, 13, 5, 7, 120000 * (n % 2),
                                     tzinfo=UTC if n % 3 else datetime.timezone(datetime.timedelta(hours=-5, minutes=-30))),
        "balance": decimal.Decimal(["-0.05", "1234567.80", "0.00"][n % 3]),
        "active": n % 2 == 0,
        "tags": {"tag": [] if n % 2 else ["vip", "net-30", "eu"]},
        "notes": None if n % 2 else f"note {n}: «quoted» text",
    }


def check_customer(failures, base, reference):
    where = f"{base} customer"
    client = zeep.Client(f"{base}{CUSTOMER_PATH}?wsdl")
    got = [plain(c) for c in client.service.get(count=5, offset=0) or []]
    failures.check(f"{where} get(5, 0) ids", [1, 2, 3, 4, 5], [c.get("id") for c in got])
    if reference:
        # The whole pre-filled store (1,000 customers), before any add: the generator ports must agree.
        ref = zeep.Client(f"{reference}{CUSTOMER_PATH}?wsdl").service.get(count=1000, offset=0)
        mine = client.service.get(count=1000, offset=0)
        compare(failures, f"{where} get(1000, 0) vs {reference}", [plain(c) for c in ref], [plain(c) for c in mine])
    sent = [customer(n) for n in range(4)]
    echoed = [received_customer(plain(c)) for c in client.service.echo(customer=sent) or []]
    compare(failures, f"{where} echo", sent, echoed)
    summary = plain(client.service.add(customer=sent))
    for key, value in (("count", 4), ("firstId", sent[0]["id"]), ("lastId", sent[-1]["id"])):
        failures.check(f"{where} add/{key}", value, summary.get(key))
    if not (isinstance(summary.get("stored"), int) and summary["stored"] >= 4):
        failures.fail(f"{where} add/stored", f"expected at least 4, got {summary.get('stored')!r}")
    failures.check(f"{where} addAsync", None, client.service.addAsync(customer=sent[:2]))
    try:
        client.service.get(count=20001, offset=0)
        failures.fail(f"{where} get(20001)", "expected a Client fault (more than the server returns), got an answer")
    except zeep.exceptions.Fault as fault:
        failures.check(f"{where} get(20001) faultcode", "Client", (fault.code or "").split(":")[-1].split("}")[-1])


# --- Faults on bad input and the plain endpoints -------------------------------------------------------------


def fault_code(body):
    """The local part of the faultcode of a SOAP 1.1 fault envelope, or None if it is not one."""
    try:
        root = etree.fromstring(body)
    except etree.XMLSyntaxError:
        return None
    code = root.find(f"{{{SOAP_ENV}}}Body/{{{SOAP_ENV}}}Fault/faultcode")
    return None if code is None else (code.text or "").split(":")[-1]


def envelope(inner):
    return f'<soap:Envelope xmlns:soap="{SOAP_ENV}"><soap:Body>{inner}</soap:Body></soap:Envelope>'


def check_bad_input(failures, base):
    """Wrong messages get HTTP 500 and a SOAP fault (Client for a wrong value; any code for broken XML)."""
    types = "http://cxf.apache.org/cxf/performance/types"
    cases = [
        ("non-number id", CXF_PATH, envelope(f'<echoComplexTypeDoc xmlns="{types}"><in/><id>abc</id></echoComplexTypeDoc>'), "Client"),
        ("unknown operation", CXF_PATH, envelope(f'<nope xmlns="{types}"/>'), None),
        ("broken XML", CXF_PATH, envelope(f'<echoStringDoc xmlns="{types}"><in>x</in>'), None),
        ("negative count", CUSTOMER_PATH, envelope('<get xmlns="http://wsbench.dev/customer"><count>-1</count><offset>0</offset></get>'), "Client"),
    ]
    for name, path, body, code in cases:
        r = requests.post(f"{base}{path}", data=body.encode(), headers={"Content-Type": "text/xml; charset=utf-8"}, timeout=10)
        got = fault_code(r.content)
        if r.status_code != 500 or got is None or (code and got != code):
            failures.fail(f"{base} bad input: {name}", f"expected HTTP 500 with a {code or 'SOAP'} fault, got HTTP {r.status_code} {r.content[:200]!r}")
    for path in ("/", "/health"):
        r = requests.get(f"{base}{path}", timeout=10)
        failures.check(f"{base} GET {path} status", 200, r.status_code)


def check_server(base, reference):
    failures = Failures()
    for check in (lambda: check_cxf(failures, base), lambda: check_customer(failures, base, reference),
                  lambda: check_bad_input(failures, base)):
        try:
            check()
        except Exception as e:  # a transport error or an answer zeep cannot read is a failure, not a crash
            failures.fail(f"{base}", f"{type(e).__name__}: {e}")
    print(f"{'ok' if not failures.items else 'FAILED'} {base}: {len(failures.items)} failed check(s)")
    return failures.items


# --- Self-test: a wrong answer must fail ----------------------------------------------------------------------

# One changed value per kind of answer: a struct field, an array echo (name), a fault turned into an answer is
# not needed (zeep raises on faults either way).
TAMPERS = [(b">32767<", b">32766<"), ("Kraków".encode(), b"Krakow")]


def tampering_proxy(target):
    """A local HTTP proxy to `target` that applies TAMPERS to response bodies; returns its base URL."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def forward(self):
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else None
            headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "content-length")}
            r = requests.request(self.command, target + self.path, data=body, headers=headers, timeout=30)
            out = r.content.replace(target.split("//")[1].encode(), self.headers["Host"].encode())
            for old, new in TAMPERS:
                out = out.replace(old, new, 1)
            self.send_response(r.status_code)
            self.send_header("Content-Type", r.headers.get("Content-Type", "text/xml"))
            self.send_header("Content-Length", str(len(out)))
            self.end_headers()
            self.wfile.write(out)

        do_GET = do_POST = forward

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{server.server_address[1]}"


def self_test(target):
    print(f"self-test: checking {target} through a proxy that changes {len(TAMPERS)} values; failures expected")
    failed = check_server(tampering_proxy(target), None)
    wanted = ["varShort", "address/city"]
    missed = [w for w in wanted if not any(w in f for f in failed)]
    if missed:
        print(f"self-test FAILED: the wrong values at {missed} were not caught")
        return 1
    print(f"self-test ok: every planted wrong value was caught ({len(failed)} failed checks)")
    return 0


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("urls", nargs="+", metavar="URL")
    p.add_argument("--reference", metavar="URL", help="bench-server: `get` must answer what it answers")
    p.add_argument("--self-test", action="store_true", help="show that wrong answers fail (one URL)")
    a = p.parse_args()
    if a.self_test:
        return self_test(a.urls[0])
    failed = [f for url in a.urls for f in check_server(url.rstrip("/"), a.reference and a.reference.rstrip("/"))]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
