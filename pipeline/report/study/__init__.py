"""The length study's own pages (reports/study/): their templates, context, figures and the lesson's
statements the study judges; the study_pages stage writes them. The lesson's report imports none of it."""
