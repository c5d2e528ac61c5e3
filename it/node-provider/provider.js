'use strict';

// An independent pure-JS dubbo:// provider of org.rudder.it.GreetingService
// (sofa-rpc-node + dubbo-remoting), registered in ZooKeeper under /dubbo.
//
// Settings (environment):
//   RUDDER_ZK_ADDRESS  (127.0.0.1:2181)   RUDDER_DUBBO_PORT (20890)
//   RUDDER_INSTANCE    (node-PORT)        RUDDER_VERSION    (1.0.0; see below)
//   RUDDER_GROUP       ("")               RUDDER_WEIGHT     (100)
//   RUDDER_APPLICATION (rudder-it-node-provider)
// Prints "READY <registered url>" on stdout once the URL is visible in ZooKeeper;
// its own logs go to stderr. Runs until SIGTERM/SIGINT, then unregisters.
//
// sofa-rpc-node routes a request by "<path>:<version from the body>", so a caller
// must send exactly RUDDER_VERSION (an empty version never matches). It ignores
// the group on requests; the group only appears in the registered URL.

const net = require('net');
const util = require('util');
const { server: { RpcServer }, registry: { ZookeeperRegistry } } = require('sofa-rpc-node');
const dubboProtocol = require('dubbo-remoting');

const LOOPBACK = '127.0.0.1';
const INTERFACE = 'org.rudder.it.GreetingService';

function setting(name, fallback) {
  const value = process.env[name];
  return value === undefined || value === '' ? fallback : value;
}

function intSetting(name, fallback) {
  const raw = setting(name, String(fallback));
  const value = Number.parseInt(raw, 10);
  if (!Number.isInteger(value)) {
    throw new Error(`${name} must be an integer, got '${raw}'`);
  }
  return value;
}

const zkAddress = setting('RUDDER_ZK_ADDRESS', '127.0.0.1:2181');
const port = intSetting('RUDDER_DUBBO_PORT', 20890);
const instance = setting('RUDDER_INSTANCE', `node-${port}`);
const version = setting('RUDDER_VERSION', '1.0.0');
const group = setting('RUDDER_GROUP', '');
const weight = intSetting('RUDDER_WEIGHT', 100);
const appName = setting('RUDDER_APPLICATION', 'rudder-it-node-provider');

// stdout carries only the READY line, so every log line goes to stderr.
const logger = {
  debug() {},
  info: (...args) => console.error('[info]', util.format(...args)),
  warn: (...args) => console.error('[warn]', util.format(...args)),
  error: (...args) => console.error('[error]', util.format(...args)),
};

// sofa-rpc-node listens on every interface and advertises the first LAN
// address; both must be loopback here.
class LoopbackRpcServer extends RpcServer {
  _startServer(listenPort) {
    const tcp = net.createServer();
    tcp.once('error', err => { this.emit('error', err); });
    tcp.on('connection', socket => { this._handleSocket(socket); });
    tcp.listen(listenPort, LOOPBACK, () => {
      this.logger.info('[LoopbackRpcServer] listening on %s:%s', LOOPBACK, tcp.address().port);
    });
    return tcp;
  }

  get params() {
    return Object.assign(super.params, { weight, 'rudder.instance': instance });
  }
}

class GreetingException extends Error {
  constructor(message) {
    super(message);
    this.name = 'GreetingException';
    // Expected by the tests: keep the stderr log free of stack traces.
    this.ignoreLog = true;
  }
}

function sleep(millis) {
  return new Promise(resolve => setTimeout(resolve, millis));
}

const greeting = {
  async sayHello(name) {
    return `Hello ${name}, from ${instance}`;
  },
  async add(a, b) {
    return a + b;
  },
  async echoUser(user) {
    const tags = Array.isArray(user && user.tags) ? user.tags.slice() : [];
    tags.push(`seen-by:${instance}`);
    return { name: user && user.name, age: ((user && user.age) || 0) + 1, tags };
  },
  async nullValue() {
    return null;
  },
  async fail(msg) {
    throw new GreetingException(msg);
  },
  async slow(millis) {
    await sleep(Math.max(0, millis));
    return `slept ${millis}`;
  },
};

// Return types and the User class layout let dubbo-remoting write typed
// hessian values (an int for add, an org.rudder.it.User object for echoUser)
// instead of guessing from JS values.
const apiMeta = {
  methods: [
    { name: 'sayHello', returnType: 'java.lang.String' },
    { name: 'add', returnType: 'int' },
    { name: 'echoUser', returnType: 'org.rudder.it.User' },
    { name: 'nullValue', returnType: 'java.lang.String' },
    { name: 'fail', returnType: 'java.lang.String' },
    { name: 'slow', returnType: 'java.lang.String' },
  ],
  classMaps: {
    'org.rudder.it.User': {
      name: { type: 'java.lang.String' },
      age: { type: 'int' },
      tags: { type: 'java.util.List', generic: [{ type: 'java.lang.String' }] },
    },
  },
};

async function main() {
  const registry = new ZookeeperRegistry({ logger, address: `${zkAddress}/dubbo` });
  await registry.ready();

  const server = new LoopbackRpcServer({
    appName,
    logger,
    registry,
    port,
    publishAddress: LOOPBACK,
    protocol: dubboProtocol,
    version,
    group,
  });
  server.addService({ interfaceName: INTERFACE, apiMeta }, greeting);
  await server.start();
  await server.publish();

  const published = [...server.services.values()].map(service => service.publishUrl);
  process.stdout.write(`READY ${published.join(' ')}\n`);

  let closing = false;
  const shutdown = async () => {
    if (closing) return;
    closing = true;
    try {
      await server.close();
      await registry.close();
    } finally {
      process.exit(0);
    }
  };
  process.on('SIGTERM', shutdown);
  process.on('SIGINT', shutdown);
}

main().catch(err => {
  logger.error(err);
  process.exit(1);
});
