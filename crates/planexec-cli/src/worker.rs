//! `worker`: serve planexec's Restate handlers (`planexec_restate`), so a
//! Restate server sends this process runs to drive and steps to run with
//! its own tools, workspace and models, and journals what came of them.

use std::net::SocketAddr;
use std::sync::Arc;

use planexec::AutoApprove;

use crate::args::{Command, CommonArgs, LedgerArgs};
use crate::config::Config;
use crate::display::{init_logging, Display};
use crate::outcome::{BadInput, EXIT_OK};
use crate::setup::{assemble_agent, model_setup, open_tools, Cassette, Recorded};

pub struct WorkerArgs {
    pub listen: String,
    pub capacity: usize,
    /// The pool to share the work in, if any.
    pub pool: Option<String>,
    pub name: String,
    pub register: Option<String>,
    pub advertise: Option<String>,
}

/// `planexec worker …`.
pub async fn dispatch(command: Command, quiet: bool, verbose: u8) -> Result<u8, BadInput> {
    let Command::Worker {
        listen,
        pool,
        name,
        capacity,
        register,
        advertise,
        common,
        ledger,
    } = command
    else {
        return Err(BadInput("not a worker command".to_string()));
    };
    let name = name.unwrap_or_else(|| format!("worker-{}", std::process::id()));
    let listen = listen.unwrap_or_else(|| {
        match pool {
            Some(_) => "127.0.0.1:0",
            None => "127.0.0.1:9080",
        }
        .to_string()
    });
    let args = WorkerArgs {
        listen,
        capacity,
        pool,
        name,
        register,
        advertise,
    };
    self::command(args, common, ledger, quiet, verbose).await
}

pub async fn command(
    args: WorkerArgs,
    common: CommonArgs,
    ledger: LedgerArgs,
    quiet: bool,
    verbose: u8,
) -> Result<u8, BadInput> {
    let addr: SocketAddr = args.listen.parse().map_err(|e| {
        BadInput(format!(
            "--listen {} is not HOST:PORT ({e}); e.g. 127.0.0.1:9080",
            args.listen
        ))
    })?;
    let workspace = common.workspace();
    let config = Config::load(&workspace, &common.flags())?;
    let options = config.run_options()?;
    let display = Display::new(quiet, Vec::new());
    init_logging(verbose, &display);
    let models = model_setup(&config, &options, &Cassette::default())?;
    let store = crate::runs::open(ledger.db.as_deref()).await?;
    let tools = open_tools(&workspace, &config, &common.mcp).await?;
    // The runs this worker drives are recorded as local runs are.
    let recorded = Recorded {
        store,
        workspace: workspace.clone(),
    };
    let agent = assemble_agent(
        &config,
        &models,
        options,
        tools.registry.clone(),
        Arc::new(AutoApprove),
        Some(recorded),
    );
    let agent = Arc::new(tools.or_shutdown(agent).await?);
    let bound = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| BadInput(format!("cannot listen on {addr}: {e}")));
    let listener = tools.or_shutdown(bound).await?;
    let local = listener.local_addr().map(|a| a.to_string()).unwrap_or(args.listen);
    let url = args.advertise.unwrap_or_else(|| format!("http://{local}"));
    // The first line says where: a script (or a test) reads the address from it.
    eprintln!("planexec worker {} serving Restate handlers at {url}", args.name);
    let serving = tokio::spawn(planexec_restate::worker::serve(
        agent,
        args.name.clone(),
        args.capacity,
        listener,
        async {
            let _ = tokio::signal::ctrl_c().await;
        },
    ));
    if let Some(pool) = &args.pool {
        let pool_addr: SocketAddr = match pool.parse() {
            Ok(addr) => addr,
            Err(e) => {
                serving.abort();
                let why = format!("--pool {pool} is not HOST:PORT ({e}); e.g. 127.0.0.1:9080");
                return tools.or_shutdown(Err(BadInput(why))).await;
            }
        };
        let member =
            planexec_restate::worker::stay_in_pool(args.name.clone(), url, pool_addr, args.register.clone(), |said| {
                match said {
                    Ok(line) => eprintln!("{line}"),
                    Err(e) => eprintln!("error: {e}"),
                }
            });
        tokio::select! {
            _ = member => {}
            _ = serving => {}
        }
        tools.shutdown().await;
        return Ok(EXIT_OK);
    }
    if let Some(admin) = &args.register {
        if let Err(e) = planexec_restate::worker::register(admin, &url).await {
            serving.abort();
            return tools.or_shutdown(Err(BadInput(e))).await;
        }
        eprintln!("registered with Restate at {admin}");
    }
    let _ = serving.await;
    tools.shutdown().await;
    Ok(EXIT_OK)
}
