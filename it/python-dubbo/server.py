"""The Greeter of proto/greeter.proto (SayHello) served by apache-dubbo, Dubbo's own Python
implementation (PyPI apache-dubbo 3.0.0b1), over Triple with protobuf messages, registered in
ZooKeeper at interface level as that library does it (`tri://HOST:PORT?service=...`).

Settings from the environment: RUDDER_ZK_ADDRESS (127.0.0.1:2181), RUDDER_DUBBO_PORT (required),
RUDDER_INSTANCE (the reply's served_by). Prints "READY <url>" on stdout once exported and registered;
SIGTERM or SIGINT ends it (its ZooKeeper node is ephemeral).
"""
import os
import signal
import sys
import threading

import grpc
import dubbo
from dubbo.configs import RegistryConfig, ServiceConfig
from dubbo.proxy.handlers import RpcMethodHandler, RpcServiceHandler

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "proto"))
# grpc is only the protobuf compiler here (grpcio-tools); apache-dubbo serves the calls.
protos, _ = grpc.protos_and_services("greeter.proto")

SERVICE = "org.rudder.it.proto.Greeter"


def main():
    zk = os.environ.get("RUDDER_ZK_ADDRESS", "127.0.0.1:2181")
    port = int(os.environ["RUDDER_DUBBO_PORT"])
    instance = os.environ.get("RUDDER_INSTANCE", f"apache-dubbo-{port}")
    host, zk_port = zk.rsplit(":", 1)

    def say_hello(request):
        return protos.HelloReply(message=f"Hello {request.name}", served_by=instance)

    handler = RpcServiceHandler(
        service_name=SERVICE,
        method_handlers=[
            RpcMethodHandler.unary(
                method=say_hello,
                method_name="SayHello",
                request_deserializer=protos.HelloRequest.FromString,
                response_serializer=protos.HelloReply.SerializeToString,
            )
        ],
    )
    registry = RegistryConfig.from_url(f"zookeeper://{host}:{zk_port}")
    bootstrap = dubbo.Dubbo(registry_config=registry)
    service = ServiceConfig(handler, host="127.0.0.1", port=port, protocol="tri")
    server = bootstrap.create_server(service)
    server.start()
    print(f"READY tri://127.0.0.1:{port}/{SERVICE}", flush=True)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    stop.wait()


if __name__ == "__main__":
    main()
