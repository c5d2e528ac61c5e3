"""A plain gRPC server of another stack (Python grpcio) serving the Greeter of proto/greeter.proto.

rudder calls it by URL (tri://127.0.0.1:PORT/org.rudder.it.proto.Greeter), with descriptors from
--proto or from this server's reflection service (grpcio-reflection serves grpc.reflection.v1alpha).
No generated code is kept: grpcio-tools compiles the .proto when the server starts.

Environment:
  RUDDER_GRPC_PORT   port on 127.0.0.1 (required)
  RUDDER_INSTANCE    the name answers carry in served_by (default python-grpc)
  RUDDER_VERSION     if set, a call must carry this tri-service-version header (as a Dubbo provider
                     exports one version); another one is NOT_FOUND
  RUDDER_REFLECTION  "off" serves no reflection

Also org.rudder.it.streams.Gatherer (it/python-grpc/streams.proto, importing greeter.proto): Gather
joins the names of a request stream into one answer, Echo answers each request as it comes.

Answers: SayHello {"name": N} -> {"message": "Hello N", "servedBy": INSTANCE}; an empty name is
INVALID_ARGUMENT. SayHelloStream {"name": N, "count": C} -> C answers "Hello N #i" (C at most 1000).
Prints "READY tri://127.0.0.1:PORT/org.rudder.it.proto.Greeter" on stdout once it listens.
"""

import os
import signal
import sys
from concurrent import futures

import grpc

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "proto"))
sys.path.insert(0, HERE)

protos, services = grpc.protos_and_services("greeter.proto")
_, stream_services = grpc.protos_and_services("streams.proto")

SERVICE = "org.rudder.it.proto.Greeter"
GATHERER = "org.rudder.it.streams.Gatherer"
MAX_STREAM = 1000


class Greeter(services.GreeterServicer):
    def __init__(self, instance, version):
        self.instance = instance
        self.version = version

    def _check_version(self, context):
        if not self.version:
            return
        sent = dict(context.invocation_metadata()).get("tri-service-version", "")
        if sent != self.version:
            context.abort(
                grpc.StatusCode.NOT_FOUND,
                f"no {SERVICE} at version {sent or '(none)'}; this server exports {self.version}",
            )

    def SayHello(self, request, context):
        self._check_version(context)
        if not request.name:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, "name is required")
        return protos.HelloReply(message=f"Hello {request.name}", served_by=self.instance)

    def SayHelloStream(self, request, context):
        self._check_version(context)
        if request.count > MAX_STREAM:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"count is at most {MAX_STREAM}")
        for i in range(1, request.count + 1):
            yield protos.HelloReply(message=f"Hello {request.name} #{i}", served_by=self.instance)


class Gatherer(stream_services.GathererServicer):
    """The client- and bidi-streaming methods of streams.proto."""

    def __init__(self, instance):
        self.instance = instance

    def Gather(self, request_iterator, context):
        names = [request.name for request in request_iterator]
        return protos.HelloReply(message=",".join(names), served_by=self.instance)

    def Echo(self, request_iterator, context):
        for request in request_iterator:
            yield protos.HelloReply(message=f"Hello {request.name}", served_by=self.instance)


def main():
    port = int(os.environ["RUDDER_GRPC_PORT"])
    instance = os.environ.get("RUDDER_INSTANCE", "python-grpc")
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    services.add_GreeterServicer_to_server(
        Greeter(instance, os.environ.get("RUDDER_VERSION", "")), server
    )
    stream_services.add_GathererServicer_to_server(Gatherer(instance), server)
    if os.environ.get("RUDDER_REFLECTION", "on") != "off":
        from grpc_reflection.v1alpha import reflection

        reflection.enable_server_reflection(
            [SERVICE, GATHERER, reflection.SERVICE_NAME], server
        )
    if server.add_insecure_port(f"127.0.0.1:{port}") != port:
        sys.exit(f"cannot listen on 127.0.0.1:{port}")
    server.start()
    signal.signal(signal.SIGTERM, lambda *_: server.stop(0))
    print(f"READY tri://127.0.0.1:{port}/{SERVICE}", flush=True)
    server.wait_for_termination()


if __name__ == "__main__":
    main()
