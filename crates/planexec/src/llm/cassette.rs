//! Record and replay model exchanges ("cassettes").
//!
//! [`Recorder`] wraps any provider and appends each request with its reply to
//! a JSON Lines file. [`Replayer`] is a provider that answers from such a file
//! instead of a model: deterministically, with no network, and with a clear
//! error when the run asks something the cassette does not hold. This is how
//! users pin real model behaviour in regression tests of their own agents.
//!
//! A request is matched on everything but its model name (role, messages,
//! tools, output format), so a cassette replays under any model setting.
//! Identical requests are answered in the order they were recorded. A
//! streamed call is recorded with the pieces its text came in, and replayed
//! streaming the same pieces, so a run that acts on a reply as it arrives
//! (the compiler strategy) replays as it ran.

use std::collections::{HashMap, VecDeque};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{ChatModel, ChatRequest, ChatResponse, LlmError, Prepared, TextSink};

/// One line of a cassette.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CassetteEntry {
    pub request: ChatRequest,
    pub response: ChatResponse,
    /// For a streamed call: the pieces its text arrived in.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub chunks: Vec<String>,
    /// What the recorded provider said of itself, which shapes a run's
    /// requests (its plan help, its prompt style): a replay says the same,
    /// so the run asks what was recorded.
    #[serde(default, skip_serializing_if = "Traits::is_default")]
    pub provider: Traits,
}

/// The provider's answers to [`ChatModel::wants_plan_help`] and
/// [`ChatModel::keeps_prompt_state`] when a cassette was recorded.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Traits {
    #[serde(default)]
    pub wants_plan_help: bool,
    #[serde(default)]
    pub keeps_prompt_state: bool,
}

impl Traits {
    fn of(model: &dyn ChatModel) -> Traits {
        Traits {
            wants_plan_help: model.wants_plan_help(),
            keeps_prompt_state: model.keeps_prompt_state(),
        }
    }

    fn is_default(&self) -> bool {
        *self == Traits::default()
    }
}

/// The part of a request that decides its reply.
fn key(request: &ChatRequest) -> String {
    let mut value = serde_json::to_value(request).unwrap_or(Value::Null);
    if let Some(obj) = value.as_object_mut() {
        obj.remove("model");
    }
    value.to_string()
}

/// A provider that records every successful exchange of `inner` to a cassette file.
pub struct Recorder {
    inner: Arc<dyn ChatModel>,
    path: PathBuf,
    /// Shared by the recorders of one cassette (one per provider of a run).
    file: Arc<Mutex<std::fs::File>>,
}

impl Recorder {
    /// Record to `path` (created, or truncated if it exists).
    pub fn create(inner: Arc<dyn ChatModel>, path: &Path) -> Result<Recorder, String> {
        let file =
            std::fs::File::create(path).map_err(|e| format!("cannot write the cassette {}: {e}", path.display()))?;
        Ok(Recorder {
            inner,
            path: path.to_path_buf(),
            file: Arc::new(Mutex::new(file)),
        })
    }

    /// A recorder of `inner` into the same cassette (for a run whose roles
    /// use several providers).
    pub fn also(&self, inner: Arc<dyn ChatModel>) -> Recorder {
        Recorder {
            inner,
            path: self.path.clone(),
            file: self.file.clone(),
        }
    }
}

#[async_trait]
impl ChatModel for Recorder {
    fn describe(&self) -> String {
        format!("{} (recording to {})", self.inner.describe(), self.path.display())
    }

    fn provider_name(&self) -> &str {
        self.inner.provider_name()
    }

    async fn chat(&self, request: ChatRequest) -> Result<ChatResponse, LlmError> {
        let response = self.inner.chat(request.clone()).await?;
        self.write(request, &response, Vec::new())?;
        Ok(response)
    }

    /// Streams through to the provider (the caller sees the pieces as they
    /// come) and records them with the reply.
    async fn chat_stream(&self, request: ChatRequest, on_text: TextSink<'_>) -> Result<ChatResponse, LlmError> {
        let chunks = Mutex::new(Vec::new());
        let pass_on = |text: &str| {
            chunks.lock().unwrap().push(text.to_string());
            on_text(text);
        };
        let response = self.inner.chat_stream(request.clone(), &pass_on).await?;
        self.write(request, &response, chunks.into_inner().unwrap())?;
        Ok(response)
    }

    /// Nothing to record: the provider only keeps a prompt's state.
    async fn prepare(&self, system: &str) -> Result<Prepared, LlmError> {
        self.inner.prepare(system).await
    }

    fn wants_plan_help(&self) -> bool {
        self.inner.wants_plan_help()
    }

    fn keeps_prompt_state(&self) -> bool {
        self.inner.keeps_prompt_state()
    }
}

impl Recorder {
    fn write(&self, request: ChatRequest, response: &ChatResponse, chunks: Vec<String>) -> Result<(), LlmError> {
        let line = serde_json::to_string(&CassetteEntry {
            request,
            response: response.clone(),
            chunks,
            provider: Traits::of(self.inner.as_ref()),
        })
        .unwrap_or_default();
        let mut file = self.file.lock().unwrap();
        writeln!(file, "{line}")
            .and_then(|_| file.flush())
            .map_err(|e| LlmError::InvalidResponse(format!("cannot write the cassette {}: {e}", self.path.display())))
    }
}

/// A recorded reply, with the pieces it was streamed in (none if it was not).
type RecordedReply = (ChatResponse, Vec<String>);

/// A provider that answers from a cassette.
pub struct Replayer {
    path: PathBuf,
    /// Replies by request, in the order they were recorded.
    replies: Mutex<HashMap<String, VecDeque<RecordedReply>>>,
    model: Option<String>,
    entries: usize,
    provider: Traits,
}

impl Replayer {
    /// Load a cassette; errors name the file and line.
    pub fn open(path: &Path) -> Result<Replayer, String> {
        let text =
            std::fs::read_to_string(path).map_err(|e| format!("cannot read the cassette {}: {e}", path.display()))?;
        let mut replies: HashMap<String, VecDeque<RecordedReply>> = HashMap::new();
        let mut model = None;
        let mut provider = None;
        let mut entries = 0;
        for (i, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
            let entry: CassetteEntry = serde_json::from_str(line).map_err(|e| {
                format!(
                    "{}:{}: not a cassette entry ({e}); cassettes are written by --record",
                    path.display(),
                    i + 1
                )
            })?;
            model.get_or_insert_with(|| entry.request.model.clone());
            provider.get_or_insert(entry.provider);
            replies
                .entry(key(&entry.request))
                .or_default()
                .push_back((entry.response, entry.chunks));
            entries += 1;
        }
        Ok(Replayer {
            path: path.to_path_buf(),
            replies: Mutex::new(replies),
            model,
            entries,
            provider: provider.unwrap_or_default(),
        })
    }

    /// The model the cassette was recorded with.
    pub fn model(&self) -> Option<&str> {
        self.model.as_deref()
    }

    /// Exchanges in the cassette.
    pub fn len(&self) -> usize {
        self.entries
    }

    pub fn is_empty(&self) -> bool {
        self.entries == 0
    }
}

#[async_trait]
impl ChatModel for Replayer {
    fn describe(&self) -> String {
        format!("replay of {}", self.path.display())
    }

    fn provider_name(&self) -> &str {
        "replay"
    }

    async fn chat(&self, request: ChatRequest) -> Result<ChatResponse, LlmError> {
        self.next(&request).map(|(reply, _)| reply)
    }

    /// The recorded pieces go to `on_text` in order (a reply recorded whole goes as one).
    async fn chat_stream(&self, request: ChatRequest, on_text: TextSink<'_>) -> Result<ChatResponse, LlmError> {
        let (reply, chunks) = self.next(&request)?;
        if chunks.is_empty() {
            if let Some(text) = &reply.content {
                on_text(text);
            }
        }
        for chunk in &chunks {
            on_text(chunk);
        }
        Ok(reply)
    }

    fn wants_plan_help(&self) -> bool {
        self.provider.wants_plan_help
    }

    fn keeps_prompt_state(&self) -> bool {
        self.provider.keeps_prompt_state
    }
}

impl Replayer {
    /// The next recorded reply to `request`, or an error saying the run asked something new.
    fn next(&self, request: &ChatRequest) -> Result<RecordedReply, LlmError> {
        let mut replies = self.replies.lock().unwrap();
        if let Some(reply) = replies.get_mut(&key(request)).and_then(VecDeque::pop_front) {
            return Ok(reply);
        }
        let asked = request
            .messages
            .iter()
            .rev()
            .find_map(|m| match m {
                super::Message::User { content } => Some(content.as_str()),
                _ => None,
            })
            .unwrap_or("");
        Err(LlmError::BadRequest(format!(
            "the cassette {} holds no reply for this {} request: the run asked something it did not ask when the cassette was recorded (its last user message ends {:?}). Record the cassette again with --record",
            self.path.display(),
            request.role,
            tail(asked, 160)
        )))
    }
}

/// The last `max` characters of `s`, marked when cut (the end of a prompt is
/// where the task and the step are).
fn tail(s: &str, max: usize) -> String {
    let count = s.chars().count();
    if count <= max {
        return s.to_string();
    }
    format!("…{}", s.chars().skip(count - max).collect::<String>())
}
