"""A token service for the CNCF distribution registry's `auth: token:` mode
(test infrastructure for `oci://` inputs, tests/interop/oci.rs,
docs/adr/0046-oci-registries.md).

The registry answers every request without a token with a 401 whose
`WWW-Authenticate: Bearer realm=...,service=...,scope=...` names this
service; a client asks here (`GET /token?service=S&scope=repository:NAME:pull`,
anonymously or with HTTP Basic credentials) and sends the token back as
`Authorization: Bearer`. The registry itself verifies every token: a JWT
(the distribution token spec, registry/auth/token/token.go of
github:distribution/distribution v2.8, read, not copied) whose issuer and
audience are the configured `issuer` and `service`, within `nbf`/`exp`, and
whose ES256 signature is by the key of the leaf certificate in the header's
`x5c`, which must verify against the registry's `rootcertbundle`. So the
tokens here are real: signed with the key of the self-signed certificate
the test made with openssl (the registry's bundle), by `cryptography`.

Policy: `--public REPO` is granted `pull` to anyone; `--private REPO` only to
`--user`/`--password` (wrong credentials: 401); any other repository gets a
token with no access (as Docker Hub answers), which the registry refuses.

The answer depends on the first word of `--mode-file` (re-read on every
request, so one registry serves every case): `ok` (default: `token` and
`access_token`), `access-token-only`, `token-only`, `refuse` (401), `not-json`,
`no-token` (JSON without a token), `not-a-jwt`, `bad-signature` (signed
by another key), `expired` (exp an hour ago, past the registry's 60 s
leeway).

Serves HTTPS on 127.0.0.1 (`--tls-cert`/`--tls-key`, a certificate of the
test's own authority), prints {"port": N} once listening, and appends one
JSON line per request to `--log` (path, service, scopes, the user if any
and whether credentials were accepted; never a password or a token).
"""

import argparse
import base64
import hashlib
import json
import os
import ssl
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature

LOCK = threading.Lock()


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=")


def jws_es256(header, claims, key):
    """A compact JWS: base64url(header).base64url(claims).base64url(r || s)."""
    signing_input = b64url(json.dumps(header).encode()) + b"." + b64url(json.dumps(claims).encode())
    r, s = decode_dss_signature(key.sign(signing_input, ec.ECDSA(hashes.SHA256())))
    return (signing_input + b"." + b64url(r.to_bytes(32, "big") + s.to_bytes(32, "big"))).decode()


class Service:
    def __init__(self, args):
        with open(args.sign_key, "rb") as f:
            self.key = serialization.load_pem_private_key(f.read(), password=None)
        with open(args.sign_cert, "rb") as f:
            cert = x509.load_pem_x509_certificate(f.read())
        self.x5c = [base64.b64encode(cert.public_bytes(serialization.Encoding.DER)).decode()]
        self.args = args
        self.count = 0

    def mode(self):
        try:
            with open(self.args.mode_file) as f:
                return (f.read().split() or ["ok"])[0]
        except FileNotFoundError:
            return "ok"

    def log(self, entry):
        if self.args.log:
            with LOCK, open(self.args.log, "a") as f:
                f.write(json.dumps(entry) + "\n")

    def grant(self, scopes, user):
        """The access entries the caller gets: pull on the public
        repository, pull on the private one for the user."""
        access = []
        for scope in scopes:
            parts = scope.split(":")
            if len(parts) != 3 or parts[0] != "repository":
                continue
            name, actions = parts[1], parts[2].split(",")
            if "pull" not in actions:
                continue
            if name in self.args.public or (user is not None and name in self.args.private):
                access.append({"type": "repository", "name": name, "actions": ["pull"]})
        return access

    def token(self, access, user, mode):
        now = int(time.time())
        with LOCK:
            self.count += 1
            jti = hashlib.sha256(f"{now}-{self.count}-{os.getpid()}".encode()).hexdigest()[:32]
        exp = now - 3600 if mode == "expired" else now + 300
        claims = {"iss": self.args.issuer, "sub": user or "", "aud": self.args.service, "exp": exp,
                  "nbf": now - 5, "iat": now, "jti": jti, "access": access}
        header = {"typ": "JWT", "alg": "ES256", "x5c": self.x5c}
        key = ec.generate_private_key(ec.SECP256R1()) if mode == "bad-signature" else self.key
        return jws_es256(header, claims, key)


class Handler(BaseHTTPRequestHandler):
    service = None

    def log_message(self, *a):
        pass

    def reply(self, status, body, content_type="application/json"):
        data = body.encode() if isinstance(body, str) else body
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def credentials(self):
        """(user, accepted): the Basic credentials sent, if any."""
        value = self.headers.get("Authorization", "")
        if not value.startswith("Basic "):
            return None, False
        try:
            user, _, password = base64.b64decode(value[6:]).decode().partition(":")
        except Exception:
            return "?", False
        a = self.service.args
        return user, (user == a.user and password == a.password)

    def do_GET(self):
        s = self.service
        url = urlsplit(self.path)
        q = parse_qs(url.query)
        scopes = q.get("scope", [])
        user, accepted = self.credentials()
        mode = s.mode()
        s.log({"path": url.path, "service": q.get("service"), "scope": scopes, "user": user,
               "accepted": accepted, "mode": mode})
        unauthorized = json.dumps({"details": "incorrect username or password"})
        if url.path != "/token":
            return self.reply(404, json.dumps({"details": "not found"}))
        if q.get("service") != [s.args.service]:
            return self.reply(400, json.dumps({"details": "unknown service"}))
        if mode == "refuse" or (user is not None and not accepted):
            return self.reply(401, unauthorized)
        if mode == "not-json":
            return self.reply(200, "<html><body>token service</body></html>", "text/html")
        if mode == "no-token":
            return self.reply(200, json.dumps({"expires_in": 300}))
        if mode == "not-a-jwt":
            return self.reply(200, json.dumps({"token": "not-a-jwt", "expires_in": 300}))
        token = s.token(s.grant(scopes, user if accepted else None), user if accepted else None, mode)
        issued = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        body = {"expires_in": 300, "issued_at": issued}
        if mode != "access-token-only":
            body["token"] = token
        if mode != "token-only":
            body["access_token"] = token
        self.reply(200, json.dumps(body))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tls-cert", required=True)
    ap.add_argument("--tls-key", required=True)
    ap.add_argument("--sign-cert", required=True)
    ap.add_argument("--sign-key", required=True)
    ap.add_argument("--issuer", required=True)
    ap.add_argument("--service", required=True)
    ap.add_argument("--public", action="append", default=[])
    ap.add_argument("--private", action="append", default=[])
    ap.add_argument("--user", required=True)
    ap.add_argument("--password", required=True)
    ap.add_argument("--mode-file", required=True)
    ap.add_argument("--log")
    args = ap.parse_args()
    Handler.service = Service(args)
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(args.tls_cert, args.tls_key)
    server.socket = ctx.wrap_socket(server.socket, server_side=True)
    print(json.dumps({"port": server.server_address[1]}), flush=True)
    sys.stdout.close()
    server.serve_forever()


if __name__ == "__main__":
    main()
