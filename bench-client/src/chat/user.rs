//! One VolanoMark user: its own TCP connection, entering its room, then chatting exactly as VolanoMark's
//! `MarkUser` does, while timing and validating every message it receives.
//!
//! Paced mode (pause 0) is VolanoMark's token ring: user 1 sends the room's first message once everyone
//! has entered and the clock has started; a user sends whenever the room's message count (its own sent
//! plus received) reaches its turn; when user 1's turn comes after its last message it leaves, and each
//! user k leaves after seeing k-1 exits. With a pause, each user sends a message every pause (the first
//! after a random fraction of one) and, unlike VolanoMark (which never stops), leaves once it has sent its
//! count and received everyone else's.

use std::future::{poll_fn, Future};
use std::pin::{pin, Pin};
use std::sync::Arc;
use std::task::Poll;

use bench_proto::chat::{
    access_result, decode, enter_result, text_number, write_number, Access, Chat, EnterRoom,
    ExitRoom, JString, Kind, Packet, RoomList, APPLET_VERSION, MARK_TEXT, NUMBER_DIGITS,
};
use bench_proto::results::{ErrorCounts, ErrorKind, Violation, Violations};
use bytes::{Buf, BytesMut};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::{mpsc, oneshot};
use tokio::time::{interval_at, sleep_until, timeout, Instant, MissedTickBehavior, Sleep};

use super::abort::unless_aborted;
use super::flagged::Flagged;
use super::load::ChatLoad;
use super::order::{Delivery, Order};
use super::stamps::Stamps;
use super::timings::ThreadTimings;

/// Largest packet accepted from the server (its `EnterRoom` confirm lists the whole room).
const MAX_PACKET: usize = 1 << 20;
/// The stall detector's ticks per `--timeout`.
const STALL_TICKS: u32 = 4;
/// VolanoMark's user name prefix; members whose name starts with it count as test users.
const USER_PREFIX: &str = "Mark";

/// What the users of one run share. Nothing here is locked: the driver tells each user on channels of its
/// own (the clock started, the run aborted), and a user that fails says so on `failed`, which only the
/// driver reads.
#[derive(Debug)]
pub(crate) struct RunShared {
    pub(crate) load: ChatLoad,
    /// A user that fails sends once here (an unbounded send never waits and takes no lock).
    pub(crate) failed: mpsc::UnboundedSender<()>,
    pub(crate) stamps: Stamps,
    /// Latency and inter-arrival gaps of every delivery.
    pub(crate) timings: ThreadTimings,
}

impl RunShared {
    pub(crate) fn new(
        load: ChatLoad,
        failed: mpsc::UnboundedSender<()>,
        stamps: Stamps,
    ) -> RunShared {
        RunShared {
            load,
            failed,
            stamps,
            timings: ThreadTimings::default(),
        }
    }
}

/// What one user did.
#[derive(Debug)]
pub(crate) struct UserResult {
    pub(crate) sent: u64,
    pub(crate) received: u64,
    /// Chat indications checked (room, sender, text, order).
    pub(crate) validated: u64,
    pub(crate) errors: ErrorCounts,
    /// Deliveries that broke the order checked, by kind (each also a validation error), the first few,
    /// and those out of the room's order when it is not checked.
    pub(crate) violations: Violations,
    pub(crate) first_violations: Vec<Violation>,
    pub(crate) departures: u64,
    pub(crate) first_error: Option<String>,
    pub(crate) bytes_sent: u64,
    pub(crate) bytes_received: u64,
    /// When the connection closed.
    pub(crate) closed_at: Instant,
}

/// What to do after a packet.
enum Action {
    Nothing,
    Enter,
    Chat,
    /// User 1 in paced mode, once the room is full: wait for the clock, then send the first message.
    StartThenChat,
    Leave,
    Pong,
    Close,
    Fail(ErrorKind, String),
}

/// Pause mode's send timer, and whether anything arrived since the stall detector's last tick.
struct Pacing {
    /// When this user sends next (allocated once per user, not per message).
    send_timer: Pin<Box<Sleep>>,
    send_armed: bool,
    active: bool,
    /// Stall detector ticks in a row that found nothing received.
    idle_ticks: u32,
}

/// What woke the conversation loop.
enum Event {
    Read(std::io::Result<usize>),
    /// The clock started (`Some`), or the driver is gone (`None`).
    Start(Option<()>),
    SendDue,
    Tick,
}

pub(crate) struct User {
    shared: Arc<RunShared>,
    /// 0-based room index, 1-based user number (VolanoMark's numbering).
    room: usize,
    number: u32,
    room_name: JString,
    user_name: JString,
    chat_packet: Vec<u8>,
    sent: u64,
    received: u64,
    enter_count: u32,
    exit_count: u32,
    /// What this member checks of the order of its deliveries.
    order: Order,
    /// When its last delivery came ([`Stamps::now`]; 0: none yet).
    last_delivery: u64,
    /// The clock has started.
    running: bool,
    leaving: bool,
    done: bool,
    entered: Option<oneshot::Sender<Result<(), String>>>,
    result: UserResult,
}

impl User {
    pub(crate) fn new(
        shared: Arc<RunShared>,
        room: usize,
        number: u32,
        entered: oneshot::Sender<Result<(), String>>,
    ) -> User {
        let room_name = format!("Room{}", shared.load.start as usize + room);
        let user_name = format!("{USER_PREFIX}{number}");
        // Names and the fixed text are short ASCII: always valid Java strings.
        let room_name = JString::new(&room_name).expect("room name is ASCII");
        let user_name = JString::new(&user_name).expect("user name is ASCII");
        let text = JString::new(MARK_TEXT).expect("MARK_TEXT is ASCII");
        let mut chat_packet = Vec::new();
        Chat {
            room_name: room_name.as_jstr(),
            user_name: user_name.as_jstr(),
            text: text.as_jstr(),
            ..Chat::default()
        }
        .encode(&mut chat_packet);
        let (users, count) = (shared.load.users, shared.load.count);
        let (room_label, user_label) = (
            room_name.as_jstr().to_string_lossy().into_owned(),
            user_name.as_jstr().to_string_lossy().into_owned(),
        );
        User {
            shared,
            room,
            number,
            room_name,
            user_name,
            chat_packet,
            sent: 0,
            received: 0,
            enter_count: 0,
            exit_count: 0,
            order: Order::new(room_label, user_label, users, count),
            last_delivery: 0,
            running: false,
            leaving: false,
            done: false,
            entered: Some(entered),
            result: UserResult {
                sent: 0,
                received: 0,
                validated: 0,
                errors: ErrorCounts::default(),
                violations: Violations::default(),
                first_violations: Vec::new(),
                departures: 0,
                first_error: None,
                bytes_sent: 0,
                bytes_received: 0,
                closed_at: Instant::now(),
            },
        }
    }

    /// Connects, enters, chats and leaves, or stops wherever it is when `abort` fires; returns what
    /// happened. `start` says the clock started.
    pub(crate) async fn run(
        mut self,
        mut start: mpsc::Receiver<()>,
        abort: oneshot::Receiver<()>,
    ) -> UserResult {
        let finished = unless_aborted(self.connect_and_converse(&mut start), abort).await;
        self.result.closed_at = Instant::now();
        let whole = finished.is_some() && self.done;
        self.order
            .finish(self.shared.load.count, whole, self.number);
        let order = &mut self.order;
        let r = &mut self.result;
        *r.errors.get_mut(ErrorKind::Validation) += order.violations.total();
        r.violations = order.violations;
        r.first_violations = std::mem::take(&mut order.first);
        r.departures = order.departures;
        r.sent = self.sent;
        r.received = self.received;
        self.result
    }

    async fn connect_and_converse(&mut self, ctl: &mut mpsc::Receiver<()>) {
        let limit = self.shared.load.timeout;
        let stream = match timeout(limit, TcpStream::connect(self.shared.load.addr)).await {
            Ok(Ok(s)) => Some(s),
            Ok(Err(e)) => {
                self.fail(ErrorKind::Connect, format!("connecting: {e}"));
                None
            }
            Err(_) => {
                self.fail(
                    ErrorKind::Connect,
                    format!("connecting: no answer within {limit:?}"),
                );
                None
            }
        };
        if let Some(stream) = stream {
            let _ = stream.set_nodelay(true);
            self.converse(stream, ctl).await;
        }
    }

    async fn converse(&mut self, mut stream: TcpStream, ctl: &mut mpsc::Receiver<()>) {
        let bytes = access_request(&self.room_name);
        if !self.write(&mut stream, &bytes).await {
            return;
        }
        let paced = self.shared.load.paced();
        let limit = self.shared.load.timeout;
        let count = u64::from(self.shared.load.count);
        let mut buf = BytesMut::with_capacity(8192);
        // Stall detector: a tick every quarter of `limit`; the fourth in a row that finds nothing received,
        // while entering or running, fails the user (between `limit` and 1.25 × `limit` after the last
        // packet). One timer for the whole conversation: nothing is registered or reset per message.
        let quarter = limit / STALL_TICKS;
        let mut stall = interval_at(Instant::now() + quarter, quarter);
        stall.set_missed_tick_behavior(MissedTickBehavior::Delay);
        let mut pace = Pacing {
            send_timer: Box::pin(sleep_until(Instant::now())),
            send_armed: false,
            active: false,
            idle_ticks: 0,
        };
        // Raised when the control channel or a timer may be ready (see `flagged`).
        let side = Flagged::new();
        loop {
            if !self.drain(&mut buf, &mut stream, ctl, &side).await {
                return;
            }
            if !paced && self.running && !pace.send_armed && self.sent == count {
                self.maybe_leave_paused(&mut stream).await;
            }
            // The read first: a packet that has arrived is handled without polling the control channel
            // and the timers, and those are polled only after one of them woke the task (`side`): each
            // poll of a channel or timer costs as much as decoding a packet, and almost every wake-up is
            // the socket's. None of them can starve: the server sends only what the room's turn-taking
            // lets through, so reads go pending between messages, and tokio's cooperative budget bounds
            // a run of ready reads.
            let event = {
                let read = stream.read_buf(&mut buf);
                let mut read = pin!(read);
                poll_fn(|cx| {
                    if let Poll::Ready(r) = read.as_mut().poll(cx) {
                        return Poll::Ready(Event::Read(r));
                    }
                    if !side.take() {
                        return Poll::Pending;
                    }
                    let mut scx = side.context(cx);
                    let event = if let Poll::Ready(p) = ctl.poll_recv(&mut scx) {
                        Event::Start(p)
                    } else if pace.send_armed && pace.send_timer.as_mut().poll(&mut scx).is_ready()
                    {
                        Event::SendDue
                    } else if stall.poll_tick(&mut scx).is_ready() {
                        Event::Tick
                    } else {
                        return Poll::Pending;
                    };
                    // The group's other futures were not polled: poll them all next time.
                    side.raise();
                    Poll::Ready(event)
                })
                .await
            };
            if !self.on_event(event, &mut stream, &mut pace).await {
                return;
            }
        }
    }

    /// Handles every whole packet in `buf` and drops them from it; false when the conversation is over.
    async fn drain(
        &mut self,
        buf: &mut BytesMut,
        stream: &mut TcpStream,
        ctl: &mut mpsc::Receiver<()>,
        side: &Flagged,
    ) -> bool {
        let mut used = 0;
        loop {
            let action = match decode(&buf[used..], MAX_PACKET) {
                Ok(Some((packet, n))) => {
                    used += n;
                    self.handle(packet)
                }
                Ok(None) => break,
                Err(e) => Action::Fail(
                    ErrorKind::Validation,
                    format!("bad packet from the server: {e}"),
                ),
            };
            // Waiting to start polls the control channel with the task's own waker.
            let uses_ctl = matches!(action, Action::StartThenChat);
            if !self.act(action, stream, ctl).await {
                return false;
            }
            if uses_ctl {
                side.raise();
            }
        }
        buf.advance(used);
        buf.reserve(4096);
        true
    }

    /// Reacts to what woke the conversation; false when it is over.
    async fn on_event(&mut self, event: Event, stream: &mut TcpStream, pace: &mut Pacing) -> bool {
        let limit = self.shared.load.timeout;
        match event {
            Event::Read(Ok(0)) => {
                if !self.done {
                    self.fail(ErrorKind::Io, "the server closed the connection".into());
                }
                false
            }
            Event::Read(Ok(n)) => {
                self.result.bytes_received += n as u64;
                pace.active = true;
                true
            }
            Event::Read(Err(e)) => {
                self.fail(ErrorKind::Io, format!("reading: {e}"));
                false
            }
            Event::Start(Some(())) => {
                self.running = true;
                pace.active = true;
                if !self.shared.load.paced() {
                    let first = self.shared.load.pause.mul_f64(self.random_fraction());
                    pace.send_timer.as_mut().reset(Instant::now() + first);
                    pace.send_armed = true;
                }
                true
            }
            Event::Start(None) => false,
            Event::SendDue => {
                self.sent += 1;
                if !self.send_chat(stream).await {
                    return false;
                }
                pace.send_armed = self.sent < u64::from(self.shared.load.count);
                if pace.send_armed {
                    let next = Instant::now() + self.shared.load.pause;
                    pace.send_timer.as_mut().reset(next);
                }
                true
            }
            Event::Tick => {
                pace.idle_ticks = if pace.active { 0 } else { pace.idle_ticks + 1 };
                if pace.idle_ticks >= STALL_TICKS && (self.running || self.entered.is_some()) {
                    let what = if self.entered.is_some() {
                        "entering the room"
                    } else {
                        "the next packet"
                    };
                    self.fail(
                        ErrorKind::Timeout,
                        format!("waited more than {limit:?} for {what}"),
                    );
                    return false;
                }
                pace.active = false;
                true
            }
        }
    }

    /// Reacts to one packet, as `MarkUser.update` does.
    fn handle(&mut self, packet: Packet<'_>) -> Action {
        let paced = self.shared.load.paced();
        let users = self.shared.load.users;
        let my_turn = u64::from(self.number - 1);
        match packet {
            Packet::Chat(c) if c.kind == Kind::Indication && c.room_id == 0 => {
                self.check_chat(&c);
                self.received += 1;
                if paced && (self.sent + self.received) % u64::from(users) == my_turn {
                    if self.sent < u64::from(self.shared.load.count) {
                        self.sent += 1;
                        return Action::Chat;
                    } else if self.number == 1 {
                        return Action::Leave;
                    }
                }
                Action::Nothing
            }
            Packet::EnterRoom(e) if e.kind == Kind::Indication => {
                if e.user_name.as_bytes().starts_with(USER_PREFIX.as_bytes()) {
                    self.enter_count += 1;
                    if paced && self.number == 1 && self.enter_count == users {
                        self.sent += 1;
                        return Action::StartThenChat;
                    }
                }
                Action::Nothing
            }
            Packet::ExitRoom(x) if x.kind == Kind::Indication => {
                self.exit_count += 1;
                if paced && u64::from(self.exit_count) == my_turn {
                    return Action::Leave;
                }
                Action::Nothing
            }
            Packet::Access(a) if a.kind == Kind::Confirm => {
                if a.result == access_result::OKAY {
                    Action::Enter
                } else {
                    Action::Fail(
                        ErrorKind::Fault,
                        format!("access denied (result {})", a.result),
                    )
                }
            }
            Packet::EnterRoom(e) if e.kind == Kind::Confirm => {
                if e.result != enter_result::OKAY {
                    return Action::Fail(
                        ErrorKind::Fault,
                        format!("could not enter {} (result {})", e.room_name, e.result),
                    );
                }
                self.enter_count += 1;
                if let Some(tx) = self.entered.take() {
                    let _ = tx.send(Ok(()));
                }
                Action::Nothing
            }
            Packet::RoomList(r) if r.kind == Kind::Confirm && self.leaving => {
                self.done = true;
                Action::Close
            }
            Packet::Ping(Kind::Request) => Action::Pong,
            Packet::Error(e) => Action::Fail(
                ErrorKind::Fault,
                format!("the server reported an error: {}", e.text),
            ),
            // Chat confirms (pacing), private chats, and anything else VolanoMark ignores.
            _ => Action::Nothing,
        }
    }

    /// Checks a delivered message: this room, a sender of this room other than us, the text of its
    /// sender's message n; its order (per sender; the room's too when paced); and times its first delivery.
    /// A message that breaks any of it is counted (see `order`), not fatal.
    fn check_chat(&mut self, c: &Chat<'_>) {
        self.result.validated += 1;
        let load = &self.shared.load;
        if c.room_name != self.room_name.as_jstr() {
            return self.order.corrupt(format!("a message for {}", c.room_name));
        }
        let Some(sender) = mark_number(c.user_name.as_bytes())
            .filter(|&n| (1..=load.users).contains(&n) && n != self.number)
        else {
            return self
                .order
                .corrupt(format!("from unexpected sender {:?}", c.user_name));
        };
        let Some(n) = text_number(c.text.as_bytes()).filter(|&n| (1..=load.count).contains(&n))
        else {
            return self
                .order
                .corrupt(format!("from Mark{sender}: text changed: {:?}", c.text));
        };
        if load.paced() {
            let position = self.sent + self.received;
            self.order
                .ring(position, load.users, (sender, n), load.check_room_order);
        }
        if self.order.deliver(sender, n) == Delivery::Again {
            return;
        }
        let stamps = &self.shared.stamps;
        let now = stamps.now();
        let latency = stamps.latency_us(self.room, sender as usize - 1, u64::from(n - 1), now);
        let gap = (self.last_delivery != 0).then(|| (now - self.last_delivery) / 1000);
        self.last_delivery = now;
        self.shared.timings.record(latency, gap);
    }

    /// Performs an action; false when the conversation is over.
    async fn act(
        &mut self,
        action: Action,
        stream: &mut TcpStream,
        ctl: &mut mpsc::Receiver<()>,
    ) -> bool {
        match action {
            Action::Nothing => true,
            Action::Enter => {
                let profile = format!(
                    "This is the profile for {} in {}.",
                    self.user_name.as_jstr(),
                    self.room_name.as_jstr()
                );
                let profile = JString::new(&profile).expect("ASCII");
                let mut bytes = Vec::new();
                EnterRoom {
                    room_name: self.room_name.as_jstr(),
                    user_name: self.user_name.as_jstr(),
                    profile: profile.as_jstr(),
                    ..EnterRoom::default()
                }
                .encode(&mut bytes);
                self.write(stream, &bytes).await
            }
            Action::Chat => self.send_chat(stream).await,
            // The clock may have started before the last entry reached user 1.
            Action::StartThenChat if self.running => self.send_chat(stream).await,
            Action::StartThenChat => match ctl.recv().await {
                Some(()) => {
                    self.running = true;
                    self.send_chat(stream).await
                }
                None => false,
            },
            Action::Leave => self.leave(stream).await,
            Action::Pong => {
                let mut bytes = Vec::new();
                Packet::Ping(Kind::Response).encode(&mut bytes);
                self.write(stream, &bytes).await
            }
            Action::Close => false,
            Action::Fail(kind, msg) => {
                self.fail(kind, msg);
                false
            }
        }
    }

    /// Sends message number `self.sent` (already counted, from 1), stamping its send time.
    async fn send_chat(&mut self, stream: &mut TcpStream) -> bool {
        self.shared
            .stamps
            .sent(self.room, self.number as usize - 1, self.sent - 1);
        // The text is the packet's last field: its number is its first digits.
        let at = self.chat_packet.len() - MARK_TEXT.len();
        write_number(
            &mut self.chat_packet[at..at + NUMBER_DIGITS],
            self.sent as u32,
        );
        let packet = std::mem::take(&mut self.chat_packet);
        let ok = self.write(stream, &packet).await;
        self.chat_packet = packet;
        ok
    }

    /// Pause mode: leave once this user has sent all, and received all: once every other sender's last
    /// message has arrived (a message lost on the way is then missing, not awaited until the timeout).
    async fn maybe_leave_paused(&mut self, stream: &mut TcpStream) {
        if !self.leaving && self.order.finished_senders() == self.shared.load.users - 1 {
            self.leave(stream).await;
        }
    }

    /// VolanoMark's exit: `ExitRoom`, then `RoomList`, whose confirm closes the connection.
    async fn leave(&mut self, stream: &mut TcpStream) -> bool {
        self.leaving = true;
        let mut bytes = Vec::new();
        ExitRoom {
            room_name: self.room_name.as_jstr(),
            user_name: self.user_name.as_jstr(),
            ..ExitRoom::default()
        }
        .encode(&mut bytes);
        RoomList::default().encode(&mut bytes);
        self.write(stream, &bytes).await
    }

    async fn write(&mut self, stream: &mut TcpStream, bytes: &[u8]) -> bool {
        match stream.write_all(bytes).await {
            Ok(()) => {
                self.result.bytes_sent += bytes.len() as u64;
                true
            }
            Err(e) => {
                self.fail(ErrorKind::Io, format!("writing: {e}"));
                false
            }
        }
    }

    /// Counts an error and stops the run (a paced room cannot go on without one of its users).
    fn fail(&mut self, kind: ErrorKind, msg: String) {
        *self.result.errors.get_mut(kind) += 1;
        let msg = format!(
            "{} in {}: {msg}",
            self.user_name.as_jstr(),
            self.room_name.as_jstr()
        );
        if let Some(tx) = self.entered.take() {
            let _ = tx.send(Err(msg.clone()));
        }
        self.result.first_error.get_or_insert(msg);
        let _ = self.shared.failed.send(());
    }

    /// VolanoMark's `Math.random()` for the first pause, from a per-user xorshift (reproducible).
    fn random_fraction(&self) -> f64 {
        let mut x =
            (self.room as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ u64::from(self.number);
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// The number of a VolanoMark user's name (`Mark7` → 7): the prefix, then decimal digits without a leading
/// zero (so each user has exactly one name).
fn mark_number(name: &[u8]) -> Option<u32> {
    let digits = name.strip_prefix(USER_PREFIX.as_bytes())?;
    if digits.is_empty() || digits.len() > 9 || digits[0] == b'0' {
        return None;
    }
    digits.iter().try_fold(0u32, |n, &d| {
        d.is_ascii_digit().then(|| n * 10 + u32::from(d - b'0'))
    })
}

/// VolanoMark's `Access` request, with this client in the fields where Java reports its VM.
pub(crate) fn access_request(room_name: &JString) -> Vec<u8> {
    let s = |text: &str| JString::new(text).expect("ASCII");
    let (version, document_base, code_base) = (
        s(APPLET_VERSION),
        s("http://www.volano.com/chat.html"),
        s("http://chat.volano.net/vcclient"),
    );
    let (vendor, java_version) = (
        s("wsbench"),
        s(concat!("bench-client ", env!("CARGO_PKG_VERSION"))),
    );
    let (os, arch) = (s(std::env::consts::OS), s(std::env::consts::ARCH));
    let mut out = Vec::new();
    Access {
        default_room: room_name.as_jstr(),
        applet_version: version.as_jstr(),
        document_base: document_base.as_jstr(),
        code_base: code_base.as_jstr(),
        java_vendor: vendor.as_jstr(),
        java_version: java_version.as_jstr(),
        os_name: os.as_jstr(),
        os_arch: arch.as_jstr(),
        ..Access::default()
    }
    .encode(&mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::mark_number;

    #[test]
    fn user_numbers_have_one_spelling() {
        assert_eq!(mark_number(b"Mark1"), Some(1));
        assert_eq!(mark_number(b"Mark20"), Some(20));
        assert_eq!(mark_number(b"Mark999999999"), Some(999_999_999));
        for bad in [
            &b"Mark"[..],
            b"Mark01",
            b"Mark0",
            b"Mark+1",
            b"Mark1x",
            b"mark1",
            b"Mark1234567890",
            b"Bob",
        ] {
            assert_eq!(mark_number(bad), None, "{:?}", String::from_utf8_lossy(bad));
        }
    }
}
