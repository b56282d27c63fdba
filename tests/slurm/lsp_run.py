"""The language server's hpf.run with the launcher srun, over stdio.

    python3 lsp_run.py HPF_LS FILE PROCESSES TIMEOUT_SECONDS

Opens FILE, sets hpf.mpi.launcher = "srun" (ordered reductions, the given
timeout), runs `hpf.run` on PROCESSES and prints the JSON answer (result
or error) on one line. Only the standard library: tests/slurm/run.sh calls
it on the cluster it starts.
"""

import json
import pathlib
import subprocess
import sys


def main() -> None:
    hpf_ls, source, processes, timeout = sys.argv[1], pathlib.Path(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
    server = subprocess.Popen([hpf_ls], stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    def send(message: dict) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        server.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        server.stdin.flush()

    def answer(request_id: int) -> dict:
        while True:
            headers = {}
            while line := server.stdout.readline().decode().strip():
                name, value = line.split(":", 1)
                headers[name.lower()] = value.strip()
            message = json.loads(server.stdout.read(int(headers["content-length"])))
            if "method" in message and "id" in message:  # a request of the server's (progress): accept it
                send({"id": message["id"], "result": None})
            elif message.get("id") == request_id:
                return message

    send({"id": 1, "method": "initialize", "params": {"processId": None, "rootUri": None, "capabilities": {}}})
    answer(1)
    send({"method": "initialized", "params": {}})
    mpi = {"launcher": "srun", "timeoutSeconds": timeout, "orderedReductions": True}
    send({"method": "workspace/didChangeConfiguration", "params": {"settings": {"hpf": {"mpi": mpi}}}})
    uri = source.resolve().as_uri()
    document = {"uri": uri, "languageId": "fortran", "version": 1, "text": source.read_text()}
    send({"method": "textDocument/didOpen", "params": {"textDocument": document}})
    send({"id": 2, "method": "workspace/executeCommand", "params": {"command": "hpf.run", "arguments": [uri, processes]}})
    reply = answer(2)
    print(json.dumps(reply.get("result", reply.get("error"))))
    send({"id": 3, "method": "shutdown"})
    answer(3)
    send({"method": "exit"})
    server.wait(timeout=30)


if __name__ == "__main__":
    main()
