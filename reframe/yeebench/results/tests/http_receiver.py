"""A local HTTP server for the export and perflog tests: records every POST and answers with the
status the test sets (a stand-in for a database's import endpoint)."""
import http.server
import threading
from contextlib import contextmanager


class Receiver:
    def __init__(self):
        self.requests = []          # (path with query, headers, body bytes)
        self.statuses = []          # answers for the next requests, in order; then `status`
        self.status = 204
        self.answer = b""
        self.url = None


@contextmanager
def receiver():
    """A Receiver listening on 127.0.0.1 (a free port) for the duration of the block."""
    state = Receiver()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            state.requests.append((self.path, dict(self.headers), body))
            status = state.statuses.pop(0) if state.statuses else state.status
            self.send_response(status)
            self.send_header("Content-Length", str(len(state.answer)))
            self.end_headers()
            self.wfile.write(state.answer)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    state.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
