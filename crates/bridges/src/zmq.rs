//! ZeroMQ sockets for the tick protocol, blocking: the simulator as a REQ client of a
//! controller's REP server (the seed's layout: it sends each tick's frame and waits for the
//! reply), or as a REP server that controllers' REQ clients drive. Pure Rust (the `zeromq`
//! crate's ZMTP 3 over TCP, on a single-threaded runtime owned by the socket), so it talks to
//! pyzmq and libzmq peers. One message is one ZeroMQ frame; a multi-part message is an error.

use crate::Error;
use std::time::Duration;
use zeromq::{Socket, SocketRecv, SocketSend, ZmqMessage};

fn runtime() -> Result<tokio::runtime::Runtime, Error> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::Io { what: "ZeroMQ runtime".into(), source: e })
}

fn zmq_err(what: String) -> impl FnOnce(zeromq::ZmqError) -> Error {
    move |e| Error::Message(format!("{what}: {e}"))
}

fn single(m: ZmqMessage) -> Result<Vec<u8>, Error> {
    match m.len() {
        1 => Ok(m.get(0).map(|b| b.to_vec()).unwrap_or_default()),
        n => Err(Error::Message(format!("a message of {n} parts (expected 1)"))),
    }
}

/// Checks that `endpoint` is `tcp://HOST:PORT` (the transport this build has; HOST an IP
/// address or a host name) without connecting or binding.
pub fn check_endpoint(endpoint: &str) -> Result<(), Error> {
    let bad = |why: &str| Error::Message(format!("{endpoint:?} is not tcp://HOST:PORT ({why})"));
    match endpoint.parse::<zeromq::Endpoint>() {
        Ok(zeromq::Endpoint::Tcp(zeromq::Host::Domain(h), _)) if !crate::udp::host_name_ok(&h) => {
            Err(bad(&format!("{h:?} is not a host name")))
        }
        Ok(zeromq::Endpoint::Tcp(..)) => Ok(()),
        Ok(_) => Err(bad("only tcp is built in")),
        Err(e) => Err(bad(&e.to_string())),
    }
}

/// The simulator as a REQ client (`--zmq-connect`).
pub struct Client {
    rt: tokio::runtime::Runtime,
    socket: zeromq::ReqSocket,
    endpoint: String,
    timeout: Duration,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "zmq::Client({})", self.endpoint)
    }
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "zmq::Server({})", self.endpoint)
    }
}

impl Client {
    /// Connects to `endpoint` (e.g. `tcp://127.0.0.1:5555`); a reply must come within `timeout`.
    pub fn connect(endpoint: &str, timeout: Duration) -> Result<Client, Error> {
        let rt = runtime()?;
        let mut socket = zeromq::ReqSocket::new();
        match rt.block_on(async { tokio::time::timeout(timeout, socket.connect(endpoint)).await }) {
            Ok(r) => r.map_err(zmq_err(format!("connecting to {endpoint}")))?,
            Err(_) => return Err(Error::Message(format!("connecting to {endpoint}: no peer within {timeout:?}"))),
        }
        Ok(Client { rt, socket, endpoint: endpoint.to_string(), timeout })
    }

    /// Sends `message` and waits for the reply.
    pub fn request(&mut self, message: Vec<u8>) -> Result<Vec<u8>, Error> {
        let (socket, endpoint, timeout) = (&mut self.socket, &self.endpoint, self.timeout);
        self.rt.block_on(async {
            socket.send(ZmqMessage::from(message)).await.map_err(zmq_err(format!("sending to {endpoint}")))?;
            match tokio::time::timeout(timeout, socket.recv()).await {
                Ok(m) => single(m.map_err(zmq_err(format!("receiving from {endpoint}")))?),
                Err(_) => Err(Error::Message(format!("no reply from {endpoint} within {timeout:?}"))),
            }
        })
    }
}

/// The simulator as a REP server (`--zmq-bind`).
pub struct Server {
    rt: tokio::runtime::Runtime,
    socket: zeromq::RepSocket,
    endpoint: String,
}

impl Server {
    /// Binds `endpoint` (`tcp://HOST:PORT`, port 0 for any free one).
    pub fn bind(endpoint: &str) -> Result<Server, Error> {
        let rt = runtime()?;
        let mut socket = zeromq::RepSocket::new();
        let bound = rt.block_on(socket.bind(endpoint)).map_err(zmq_err(format!("binding {endpoint}")))?;
        Ok(Server { rt, socket, endpoint: bound.to_string() })
    }

    /// The bound endpoint (with the port chosen).
    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    /// The next request, or None when none came within `timeout`.
    pub fn receive(&mut self, timeout: Duration) -> Result<Option<Result<Vec<u8>, Error>>, Error> {
        let (socket, endpoint) = (&mut self.socket, &self.endpoint);
        self.rt.block_on(async {
            match tokio::time::timeout(timeout, socket.recv()).await {
                Ok(Ok(m)) => Ok(Some(single(m))),
                Ok(Err(e)) => Err(zmq_err(format!("receiving on {endpoint}"))(e)),
                Err(_) => Ok(None),
            }
        })
    }

    /// Answers the request just received.
    pub fn reply(&mut self, message: Vec<u8>) -> Result<(), Error> {
        let (socket, endpoint) = (&mut self.socket, &self.endpoint);
        self.rt.block_on(socket.send(ZmqMessage::from(message))).map_err(zmq_err(format!("replying on {endpoint}")))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::panic)]
    use super::*;
    use crate::wire::{Frame, Instruction, Reply};

    #[test]
    fn endpoints_are_checked_without_connecting() {
        for good in ["tcp://127.0.0.1:5555", "tcp://localhost:0", "tcp://[::1]:5556"] {
            assert!(check_endpoint(good).is_ok(), "{good}");
        }
        for bad in ["127.0.0.1:5555", "tcp://127.0.0.1", "tcp://a b:5", "udp://127.0.0.1:5", "tcp://h:99999", ""] {
            let e = check_endpoint(bad).unwrap_err().to_string();
            assert!(e.contains("tcp://HOST:PORT"), "{bad}: {e}");
        }
    }

    #[test]
    fn a_client_and_a_server_exchange_instructions_and_frames() {
        let mut server = Server::bind("tcp://127.0.0.1:0").unwrap();
        let endpoint = server.endpoint().to_string();
        let peer = std::thread::spawn(move || {
            let mut c = Client::connect(&endpoint, Duration::from_secs(10)).unwrap();
            let mut got = Vec::new();
            for i in [Instruction::Tick(3), Instruction::Stop] {
                got.push(Reply::decode(&c.request(i.encode()).unwrap()).unwrap());
            }
            got.push(Reply::decode(&c.request(vec![0x7F]).unwrap()).unwrap());
            got
        });
        let mut tick = 0;
        for _ in 0..3 {
            let m = server.receive(Duration::from_secs(10)).unwrap().unwrap().unwrap();
            let reply = match Instruction::decode(&m) {
                Ok(Instruction::Tick(n)) => {
                    tick += u64::from(n);
                    Reply::Ok(Frame { tick, time: tick as f64 * 0.01, ..Default::default() })
                }
                Ok(_) => Reply::Ok(Frame { tick, ..Default::default() }),
                Err(e) => Reply::Error(e.to_string()),
            };
            server.reply(reply.encode()).unwrap();
        }
        let got = peer.join().unwrap();
        assert_eq!(got[0], Reply::Ok(Frame { tick: 3, time: 0.03, ..Default::default() }));
        assert!(matches!(&got[2], Reply::Error(m) if m.contains("0x7F")), "{:?}", got[2]);
        assert!(server.receive(Duration::from_millis(50)).unwrap().is_none());
    }
}
