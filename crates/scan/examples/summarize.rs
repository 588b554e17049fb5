//! Summarises one LAS/LAZ file as `roadscan info` does (points, problems) or prints the
//! error: for measuring the reader's peak memory on hostile files
//! (`/usr/bin/time -v target/release/examples/summarize FILE`).

fn main() -> std::process::ExitCode {
    let Some(path) = std::env::args_os().nth(1) else {
        eprintln!("usage: summarize FILE");
        return std::process::ExitCode::from(2);
    };
    match scan::LasReader::open(&path).and_then(|mut r| scan::summarize(&mut r)) {
        Ok(s) => {
            println!("{} points; problems: {:?}", s.points, s.problems);
            std::process::ExitCode::SUCCESS
        }
        Err(e) => {
            println!("error: {e}");
            std::process::ExitCode::from(1)
        }
    }
}
