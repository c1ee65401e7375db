//! Application names → the app at the paper's record shapes.

use crate::apps::*;
use crate::{AppError, IscApp};

/// Registry names, in WORKLOADS.md §4 order.
pub const APPS: &[&str] = &[
    "grep",
    "knn",
    "statistics",
    "sql",
    "integration",
    "relief",
    "rle",
    "passthrough",
];

/// The app called `name` (paper record shapes; see each app's `with_*` for reduced ones).
pub fn app(name: &str) -> Result<Box<dyn IscApp>, AppError> {
    let app: Box<dyn IscApp> = match name {
        "grep" => Box::new(GrepApp::default()),
        "knn" => Box::new(KnnApp::default()),
        "statistics" => Box::new(StatisticsApp::default()),
        "sql" => Box::new(SqlApp::default()),
        "integration" => Box::new(IntegrationApp::default()),
        "relief" => Box::new(ReliefApp::default()),
        "rle" => Box::new(RleApp),
        "passthrough" | "pt" => Box::new(PassThroughApp),
        _ => {
            return Err(AppError::UnknownApp {
                name: name.to_string(),
                known: APPS.join(", "),
            })
        }
    };
    Ok(app)
}

/// Every app, in `APPS` order.
pub fn registry() -> Vec<Box<dyn IscApp>> {
    APPS.iter()
        .map(|n| app(n).expect("every listed app builds"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_builds_under_its_own_name_and_unknown_names_are_errors() {
        for (name, app) in APPS.iter().zip(registry()) {
            assert_eq!(app.name(), *name);
        }
        assert!(matches!(app("nope"), Err(AppError::UnknownApp { .. })));
    }
}
