//! A local-backend worker on its own: serves sweep points on standard input and output
//! (`nearflash_sweep::worker::serve`). The CLI's `nearflash sweep-worker` and the Python
//! package's `python -m nearflash._worker` serve the same protocol.

fn main() {
    let stdin = std::io::stdin().lock();
    let stdout = std::io::stdout().lock();
    if let Err(e) = nearflash_sweep::worker::serve(stdin, stdout) {
        eprintln!("error: {e}");
        std::process::exit(2);
    }
}
