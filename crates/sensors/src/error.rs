//! Why a sensor run or a file failed.

/// Why a sensor run or a sensor file failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A setting out of its range.
    #[error("{what} {value} is out of range ({range})")]
    Range {
        /// The setting.
        what: &'static str,
        /// Its value.
        value: f64,
        /// The range it must lie in.
        range: &'static str,
    },
    /// A pcap file that is not one, or is cut short.
    #[error("{path}: byte {offset}: {what}")]
    Pcap {
        /// The file.
        path: String,
        /// Where in it.
        offset: u64,
        /// What is wrong.
        what: String,
    },
    /// Writing an output failed.
    #[error("{what}: {source}")]
    Io {
        /// What was being written or read.
        what: String,
        /// The cause.
        source: std::io::Error,
    },
    /// The sink stopped the run.
    #[error("{0}")]
    Sink(String),
}
