//! `skills_list` over 500 skills, warm: the catalog has scanned the sources once and
//! each call checks the cached listing against the sources' stamps (one `stat` per
//! skill directory and `SKILL.md`), then builds the result. The goal is ≤ 5 ms
//! (BENCHMARKS.md). `skills_list_cold` rescans every time (the first call after a
//! change), for comparison.
//!
//! The skills are written by the bench in the Agent Skills layout under a temporary
//! home: 10 categories of 50, each `<home>/skills/<category>/<name>/SKILL.md` with
//! front matter and a short body.
//!
//! Run: `cargo bench -p tools-core --bench skills_list`

// Setup that fails must stop the benchmark loudly, as in tests.
#![allow(clippy::expect_used)]

use std::path::Path;
use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;
use tools_core::{CoreServices, Home, Registry, ToolContext};

const CATEGORIES: usize = 10;
const PER_CATEGORY: usize = 50;

fn write_skills(skills: &Path) {
    for c in 0..CATEGORIES {
        for n in 0..PER_CATEGORY {
            let dir = skills
                .join(format!("category-{c}"))
                .join(format!("skill-{c}-{n}"));
            std::fs::create_dir_all(&dir).expect("skill dir");
            std::fs::write(
                dir.join("SKILL.md"),
                format!(
                    "---\nname: skill-{c}-{n}\ndescription: Does task {n} of area {c} step by step, with checks.\nmetadata:\n  tags: [bench, area-{c}]\n---\n# Skill {c}-{n}\n\n1. Look at the input.\n2. Run the check.\n3. Report.\n"
                ),
            )
            .expect("SKILL.md");
        }
    }
}

fn skills_list(c: &mut Criterion) {
    let home = tempfile::tempdir().expect("tempdir");
    let home = Home::at(home.keep());
    write_skills(&home.skills_dir());
    let services = Arc::new(CoreServices::for_tests(home));
    let registry = Registry::new();
    tools_core::tools::register_core_tools(&registry, &services);
    let ctx = ToolContext::for_task("bench");
    let first = registry.dispatch_blocking("skills_list", json!({}), &ctx);
    let listed: serde_json::Value = serde_json::from_str(&first.text).expect("json result");
    let count = listed["count"].as_u64().expect("count");
    assert!(
        count >= (CATEGORIES * PER_CATEGORY) as u64,
        "only {count} skills listed: {}",
        first.text
    );
    c.bench_function("skills/skills_list_500_warm", |b| {
        b.iter(|| registry.dispatch_blocking("skills_list", json!({}), &ctx))
    });
    c.bench_function("skills/skills_list_500_cold", |b| {
        b.iter(|| {
            services.skills.invalidate();
            registry.dispatch_blocking("skills_list", json!({}), &ctx)
        })
    });
    let _ = std::fs::remove_dir_all(services.home.root());
}

criterion_group!(benches, skills_list);
criterion_main!(benches);
