//! The terminal over MCP servers and the modes: `tools list` with servers and
//! effect classes, servers from `planexec.toml` and from `--mcp`, a server that
//! will not start, and `--mode plan|ask|auto` refusing or asking as specified
//! with no terminal attached.

mod common;

use common::{planexec, run};
use planexec_testkit::mcp::mcp_home;
use planexec_testkit::{Reply, ScriptedServer};
use serde_json::json;

/// Write the workspace's planexec.toml and trust it, as its owner would.
fn trusted_config(dir: &std::path::Path, text: &str) {
    std::fs::write(dir.join("planexec.toml"), text).unwrap();
    let (out, _, stderr) = run(planexec(dir).arg("trust"));
    assert!(out.status.success(), "{stderr}");
}

fn plan_file(dir: &std::path::Path, steps: serde_json::Value) -> String {
    let path = dir.join("plan.json");
    std::fs::write(&path, json!({"goal": "g", "steps": steps}).to_string()).unwrap();
    path.display().to_string()
}

#[test]
fn tools_list_shows_builtins_and_each_servers_tools_with_effects() {
    let Some(home) = mcp_home() else { return };
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    trusted_config(
        dir.path(),
        &format!(
            "[[mcp_servers]]\nname = \"time\"\ncommand = \"{}\"\nargs = [\"--local-timezone\", \"UTC\"]\n\n[tools.\"fs.create_directory\"]\neffect = \"writes_workspace\"\n",
            home.python("mcp-server-time").display()
        ),
    );
    let fs = format!("fs={} {}", home.npm("mcp-server-filesystem").display(), root.display());
    let (out, stdout, stderr) = run(planexec(dir.path()).args(["tools", "list", "--mcp", &fs]));
    assert!(out.status.success(), "{stderr}");
    // python comes with the shell where python3 runs (it does here).
    assert!(stdout.starts_with("built-in (15 tools)\n"), "{stdout}");
    assert!(stdout.contains("MCP server `time` (2 tools)"), "{stdout}");
    assert!(stdout.contains("MCP server `fs` ("), "{stdout}");
    let line = |name: &str| {
        stdout
            .lines()
            .find(|l| l.trim_start().starts_with(&format!("{name} ")))
            .unwrap_or_else(|| panic!("no {name} in {stdout}"))
            .to_string()
    };
    assert!(line("shell").contains("external"));
    assert!(line("python").contains("external"));
    assert!(line("time.get_current_time").contains("read_only"));
    assert!(line("fs.write_file").contains("irreversible"));
    assert!(
        line("fs.create_directory").contains("writes_workspace *"),
        "{}",
        line("fs.create_directory")
    );
    assert!(stdout.contains("(* = effect class set in planexec.toml)"));
}

#[test]
fn a_run_uses_a_configured_server_and_stops_it_afterwards() {
    let Some(home) = mcp_home() else { return };
    let dir = tempfile::tempdir().unwrap();
    // Through `sh`, to learn the server's pid: `exec` keeps it.
    trusted_config(
        dir.path(),
        &format!(
            "[[mcp_servers]]\nname = \"time\"\ncommand = \"sh\"\nargs = [\"-c\", \"echo $$ > server.pid; exec {} --local-timezone UTC\"]\n",
            home.python("mcp-server-time").display()
        ),
    );
    let server = ScriptedServer::start();
    server
        .role("planner")
        .reply(Reply::json(&json!({"goal": "time", "steps": [
            {"id": "s1", "description": "what time is it", "tool": "time.convert_time",
             "args": {"source_timezone": "UTC", "time": "12:00", "target_timezone": "Asia/Tokyo"}, "depends_on": []}
        ]})));
    server
        .role("synthesizer")
        .reply(Reply::content("It is 21:00 in Tokyo [s1]."));
    let (out, stdout, stderr) = run(planexec(dir.path()).args([
        "run",
        "noon UTC in Tokyo?",
        "--yes",
        "--mode",
        "plan",
        "--base-url",
        &server.base_url(),
    ]));
    assert!(out.status.success(), "{stderr}");
    assert_eq!(stdout.trim(), "It is 21:00 in Tokyo [s1].");
    let planner = server.requests_from("planner")[0].prompt_text();
    assert!(
        planner.contains("time.convert_time("),
        "the planner sees the server's tools"
    );
    let synth = server.requests_from("synthesizer")[0].prompt_text();
    assert!(synth.contains("21:00"), "{synth}");
    let pid = std::fs::read_to_string(dir.path().join("server.pid")).unwrap();
    let proc = std::path::PathBuf::from(format!("/proc/{}", pid.trim()));
    assert!(!proc.exists(), "the server was stopped when the run ended");
}

#[test]
fn a_server_that_will_not_start_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let (out, _, stderr) = run(planexec(dir.path()).args([
        "tools",
        "list",
        "--mcp",
        "db=sh -c 'echo \"cannot open database: locked\" >&2; exit 1'",
    ]));
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("MCP server `db` did not start (`sh -c"), "{stderr}");
    assert!(stderr.contains("cannot open database: locked"), "{stderr}");
    let (out, _, stderr) = run(planexec(dir.path()).args(["tools", "list", "--mcp", "no name"]));
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr.contains("has no `NAME=`"), "{stderr}");
}

#[test]
fn plan_mode_refuses_side_effects_and_allowlisted_shell_commands_run() {
    let dir = tempfile::tempdir().unwrap();
    trusted_config(dir.path(), "[shell]\nallow = [\"ls *\"]\n");
    std::fs::write(dir.path().join("a.txt"), "a").unwrap();
    let plan = plan_file(
        dir.path(),
        json!([
            {"id": "s1", "description": "list", "tool": "shell", "args": {"command": "ls"}, "depends_on": []},
            {"id": "s2", "description": "write", "tool": "write_file", "args": {"path": "b.txt", "content": "b"}, "depends_on": []},
            {"id": "s3", "description": "delete", "tool": "shell", "args": {"command": "rm a.txt"}, "depends_on": []}
        ]),
    );
    let (out, _, stderr) = run(planexec(dir.path()).args(["exec", &plan, "--yes", "--mode", "plan"]));
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("step s2 uses `write_file`, which writes inside the workspace; this run is in plan mode"),
        "{stderr}"
    );
    assert!(
        stderr.contains("step s3 uses `shell`, which has effects outside the workspace"),
        "{stderr}"
    );
    assert!(!stderr.contains("step s1 uses"), "`ls` is on the allowlist: {stderr}");
    assert!(dir.path().join("a.txt").exists() && !dir.path().join("b.txt").exists());

    let server = ScriptedServer::start();
    server.role("synthesizer").reply(Reply::content("listed"));
    let plan = plan_file(
        dir.path(),
        json!([{"id": "s1", "description": "list", "tool": "shell", "args": {"command": "ls"}, "depends_on": []}]),
    );
    let (out, _, stderr) = run(planexec(dir.path()).args([
        "exec",
        &plan,
        "--yes",
        "--mode",
        "plan",
        "--json",
        "--base-url",
        &server.base_url(),
    ]));
    assert!(out.status.success(), "{stderr}");
}

#[test]
fn with_no_terminal_yes_confirms_side_effects_but_never_an_irreversible_tool() {
    let Some(home) = mcp_home() else { return };
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let fs = format!("fs={} {}", home.npm("mcp-server-filesystem").display(), root.display());
    let server = ScriptedServer::start();
    server.role("synthesizer").always(Reply::content("done"));
    let plan = plan_file(
        dir.path(),
        json!([
            {"id": "s1", "description": "write a", "tool": "write_file", "args": {"path": "a.txt", "content": "a"}, "depends_on": []},
            {"id": "s2", "description": "write b", "tool": "fs.write_file",
             "args": {"path": root.join("b.txt").display().to_string(), "content": "b"}, "depends_on": ["s1"]}
        ]),
    );
    let exec = |mode: &str| {
        run(planexec(dir.path()).args([
            "exec",
            &plan,
            "--yes",
            "--mode",
            mode,
            "--max-replans",
            "0",
            "--mcp",
            &fs,
            "--base-url",
            &server.base_url(),
        ]))
    };
    for mode in ["ask", "auto"] {
        let (out, _, stderr) = exec(mode);
        assert_eq!(out.status.code(), Some(1), "{mode}: {stderr}");
        assert!(
            stderr.contains("step s2 needs a person's confirmation to run `fs.write_file`, which cannot be undone, but standard input is not a terminal: not run"),
            "{mode}: {stderr}"
        );
        assert!(stderr.contains("allow = true"), "{stderr}");
        assert_eq!(
            std::fs::read_to_string(dir.path().join("a.txt")).unwrap(),
            "a",
            "{mode}"
        );
        assert!(!dir.path().join("b.txt").exists(), "{mode}");
    }
    trusted_config(dir.path(), "[tools.\"fs.write_file\"]\nallow = true\n");
    let (out, _, stderr) = exec("auto");
    assert!(out.status.success(), "{stderr}");
    assert_eq!(std::fs::read_to_string(dir.path().join("b.txt")).unwrap(), "b");
    // `allow` is for auto mode: ask mode still wants a person.
    let (out, _, _) = exec("ask");
    assert_eq!(out.status.code(), Some(1));
}

/// A stdio server does not inherit planexec's environment, where API keys
/// live: it sees the basics (PATH, HOME, locale), its own `env`, and only the
/// variables its config names in `env_passthrough`.
#[test]
fn a_stdio_server_sees_a_minimal_environment_not_the_api_keys() {
    let Some(home) = mcp_home() else { return };
    let dir = tempfile::tempdir().unwrap();
    let user = dir.path().join(".no-user-config/planexec");
    std::fs::create_dir_all(&user).unwrap();
    std::fs::write(
        user.join("config.toml"),
        format!(
            "[[mcp_servers]]\nname = \"ev\"\ncommand = \"{}\"\nenv = {{ MY_SETTING = \"on\" }}\nenv_passthrough = [\"PASSED_ON\"]\n",
            home.npm("mcp-server-everything").display()
        ),
    )
    .unwrap();
    let server = ScriptedServer::start();
    server.role("synthesizer").always(Reply::content("done"));
    let plan = plan_file(
        dir.path(),
        json!([{"id": "s1", "description": "env", "tool": "ev.get-env", "args": {}, "depends_on": []}]),
    );
    let (out, stdout, stderr) = run(planexec(dir.path())
        .args(["exec", &plan, "--yes", "--json", "--base-url", &server.base_url()])
        .env("OPENAI_API_KEY", "sk-secret-never-shared")
        .env("SOME_TOKEN", "token-never-shared")
        .env("PASSED_ON", "passed-on-value")
        .env("LC_ALL", "C.UTF-8"));
    assert!(out.status.success(), "{stderr}");
    let report: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let seen = report["steps"][0]["output"].to_string();
    assert!(seen.contains("PATH"), "{seen}");
    assert!(
        seen.contains("MY_SETTING") && seen.contains("passed-on-value"),
        "{seen}"
    );
    assert!(seen.contains("C.UTF-8"), "the locale is passed: {seen}");
    assert!(!seen.contains("sk-secret-never-shared"), "{seen}");
    assert!(!seen.contains("token-never-shared"), "{seen}");
    assert!(!seen.contains("OPENAI_API_KEY"), "{seen}");
}

/// server-everything's resources and prompts: `tools list` shows the
/// `mcp_resource` tool and the prompts; a task taken from a prompt
/// (`--mcp-prompt`) is what the planner plans, and a step reads a resource.
#[test]
fn a_prompt_is_a_task_and_a_resource_is_read_by_a_plan_step() {
    let Some(home) = mcp_home() else { return };
    let dir = tempfile::tempdir().unwrap();
    let everything = format!("ev={}", home.npm("mcp-server-everything").display());
    let (out, stdout, stderr) = run(planexec(dir.path()).args(["tools", "list", "--mcp", &everything]));
    assert!(out.status.success(), "{stderr}");
    assert!(stdout.contains("mcp_resource"), "{stdout}");
    assert!(stdout.contains("ev/args-prompt(city, state?)"), "{stdout}");
    let (_, stdout, _) = run(planexec(dir.path()).args(["tools", "list", "--json", "--mcp", &everything]));
    let listed: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let resource = listed["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == json!("mcp_resource"))
        .unwrap();
    let uris = resource["parameters"]["properties"]["uri"]["enum"].to_string();
    assert!(
        uris.contains("demo://resource/static/document/architecture.md"),
        "{uris}"
    );

    let server = ScriptedServer::start();
    server
        .role("planner")
        .always(Reply::json(&json!({"goal": "weather", "steps": [
        {"id": "s1", "description": "read the architecture document", "tool": "mcp_resource",
         "args": {"uri": "demo://resource/static/document/architecture.md"}, "depends_on": []}]})));
    server
        .role("synthesizer")
        .containing("You are the checker")
        .always(Reply::json(&json!({"done": true, "wrong": ""})));
    server.role("synthesizer").always(Reply::content("Read [s1]."));
    let (out, stdout, stderr) = run(planexec(dir.path()).args([
        "run",
        "--mcp-prompt",
        "ev/args-prompt",
        "city=Paris",
        "--mcp",
        &everything,
        "--yes",
        "--json",
        "--base-url",
        &server.base_url(),
    ]));
    assert!(out.status.success(), "{stderr}");
    let planner = server.requests_from("planner")[0].prompt_text();
    assert!(
        planner.contains("Task: What's weather in Paris?"),
        "the prompt is the task: {planner}"
    );
    let report: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(report["task"], json!("What's weather in Paris?"));
    let read = report["steps"][0]["output"].as_str().unwrap_or_default();
    assert!(
        read.contains("Everything Server") && read.contains("Architecture"),
        "{read}"
    );

    // A prompt's required argument left out, or an unknown prompt: said, nothing runs.
    let (out, _, stderr) = run(planexec(dir.path()).args([
        "run",
        "--mcp-prompt",
        "ev/args-prompt",
        "--mcp",
        &everything,
        "--yes",
        "--base-url",
        &server.base_url(),
    ]));
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("prompt `ev/args-prompt` needs city: add NAME=VALUE"),
        "{stderr}"
    );
    let (out, _, stderr) = run(planexec(dir.path()).args([
        "run",
        "--mcp-prompt",
        "ev/nope",
        "--mcp",
        &everything,
        "--yes",
        "--base-url",
        &server.base_url(),
    ]));
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("has no prompt `nope`; its prompts: simple-prompt, args-prompt"),
        "{stderr}"
    );
    assert_eq!(server.requests_from("planner").len(), 1);
}

/// server-everything's `trigger-sampling-request` asks its client's model:
/// planexec answers with the run's executor model, counted under role
/// `sampling` in the usage and the ledger; in plan mode it refuses unless
/// `sampling_in_plan_mode` allows it.
#[test]
fn a_servers_sampling_request_is_answered_by_the_executor_model_and_counted() {
    let Some(home) = mcp_home() else { return };
    let dir = tempfile::tempdir().unwrap();
    // The user's own config (trusted): the server, and its sampling tool taken
    // as read-only so that plan mode may call it.
    let read_only = "[tools.\"ev.trigger-sampling-request\"]\neffect = \"read_only\"\n";
    home.everything_in_user_config(dir.path(), read_only);
    let server = ScriptedServer::start();
    server
        .role("sampling")
        .always(Reply::content("hi from the executor model"));
    server.role("synthesizer").always(Reply::content("done [s1]"));
    let plan = plan_file(
        dir.path(),
        json!([{"id": "s1", "description": "ask the server to sample", "tool": "ev.trigger-sampling-request",
                "args": {"prompt": "Say hi", "maxTokens": 20}, "depends_on": []}]),
    );
    let db = dir.path().join("ledger.db");
    let db = db.to_str().unwrap();
    let exec = |mode: &str| {
        run(planexec(dir.path()).args([
            "exec",
            &plan,
            "--yes",
            "--json",
            "--mode",
            mode,
            "--verify",
            "off",
            "--db",
            db,
            "--base-url",
            &server.base_url(),
        ]))
    };
    let (out, stdout, stderr) = exec("auto");
    assert!(out.status.success(), "{stderr}");
    let report: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let output = report["steps"][0]["output"].to_string();
    assert!(output.contains("hi from the executor model"), "{output}");
    assert_eq!(report["usage"]["sampling"]["calls"], json!(1), "{}", report["usage"]);
    let asked = server.requests_from("sampling")[0].prompt_text();
    assert!(
        asked.contains("Say hi") && asked.contains("You are a helpful test server."),
        "{asked}"
    );
    let run_id = report["run_id"].as_str().unwrap();
    let (_, exported, _) = run(planexec(dir.path()).args(["runs", "export", run_id, "--db", db]));
    assert!(
        exported.contains("\"role\": \"sampling\""),
        "the ledger has the exchange"
    );

    // Plan mode: refused, and the server says so in the step's failure.
    let (_, stdout, stderr) = exec("plan");
    let report: serde_json::Value = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stderr}"));
    let said = report["steps"][0].to_string();
    assert!(said.contains("refused in plan mode"), "{said}");
    assert_eq!(server.requests_from("sampling").len(), 1, "no model call for it");

    // Allowed in config: answered in plan mode too.
    home.everything_in_user_config(dir.path(), &format!("sampling_in_plan_mode = true\n{read_only}"));
    let (out, stdout, stderr) = exec("plan");
    assert!(out.status.success(), "{stderr}");
    assert!(stdout.contains("hi from the executor model"), "{stdout}");
}

/// With nobody to answer now (`--approve later`), a server's elicitation
/// makes the run wait in the ledger; `planexec approve RUN --answer JSON`
/// gives the answer later, and the resumed step gets it.
#[test]
fn a_servers_elicitation_waits_in_the_ledger_and_is_answered_later_with_approve() {
    let Some(home) = mcp_home() else { return };
    let dir = tempfile::tempdir().unwrap();
    home.everything_in_user_config(dir.path(), "");
    let server = ScriptedServer::start();
    server.role("synthesizer").always(Reply::content("asked [s1]"));
    let plan = plan_file(
        dir.path(),
        json!([{"id": "s1", "description": "ask the user", "tool": "ev.trigger-elicitation-request", "args": {}, "depends_on": []}]),
    );
    let db = dir.path().join("ledger.db");
    let db = db.to_str().unwrap();
    let url = server.base_url();
    let common = [
        "--approve",
        "later",
        "--mode",
        "auto",
        "--verify",
        "off",
        "--db",
        db,
        "--base-url",
        &url,
    ];
    let (out, stdout, stderr) = run(planexec(dir.path()).args(["exec", &plan, "--json"]).args(common));
    assert!(out.status.success(), "{stderr}");
    let report: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let run_id = report["run_id"].as_str().unwrap().to_string();
    // The plan is approved; the step runs and its server asks: the run waits again.
    let (_, _, stderr) = run(planexec(dir.path()).args(["approve", &run_id, "--resume"]).args(common));
    assert!(
        stderr.contains("waits for an answer to the question of step s1: Please provide inputs"),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!("planexec approve {run_id} --answer")),
        "{stderr}"
    );
    // A wrong kind of decision is refused and says what to give.
    let (out, _, stderr) = run(planexec(dir.path()).args(["approve", &run_id, "--db", db]));
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr.contains("give the answer (planexec approve RUN --answer JSON"),
        "{stderr}"
    );
    // The answer, later: the step runs again and the server gets it.
    let answer = json!({"name": "Ada Lovelace"}).to_string();
    let (out, stdout, stderr) = run(planexec(dir.path())
        .args(["approve", &run_id, "--answer", &answer, "--resume", "--json"])
        .args(common));
    assert!(out.status.success(), "{stderr}");
    let report: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(report["status"], json!("succeeded"), "{report}");
    let output = report["steps"].to_string();
    assert!(
        output.contains("User provided the requested information") && output.contains("Ada Lovelace"),
        "{output}"
    );
}
