//! `nearflash reproduce <paper>`: run a paper's evaluation and write its summary.json and
//! report.html (one module per paper).

pub mod active_flash;

#[derive(clap::Subcommand, Debug)]
pub enum ReproduceCommand {
    /// Active Flash (seed 004): the analytic model, background compression, host/controller split.
    ActiveFlash(active_flash::ActiveFlashArgs),
}

pub fn run(cmd: &ReproduceCommand) -> Result<(), crate::error::CliError> {
    match cmd {
        ReproduceCommand::ActiveFlash(args) => active_flash::run(args),
    }
}
