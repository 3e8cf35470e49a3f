BEGIN TRANSACTION;
CREATE TABLE alembic_version (
	version_num VARCHAR(32) NOT NULL, 
	CONSTRAINT alembic_version_pkc PRIMARY KEY (version_num)
);
INSERT INTO "alembic_version" VALUES('v3.2.0.a');
CREATE TABLE bracket_comparisons (
	id INTEGER NOT NULL, 
	session VARCHAR(200) NOT NULL, 
	left_run_id INTEGER NOT NULL, 
	right_run_id INTEGER NOT NULL, 
	winner VARCHAR(10) NOT NULL, 
	created_at FLOAT NOT NULL, 
	PRIMARY KEY (id)
);
CREATE TABLE bracket_configs (
	id INTEGER NOT NULL, 
	session VARCHAR(200) NOT NULL, 
	trial_number INTEGER NOT NULL, 
	kind VARCHAR(20) NOT NULL, 
	stage VARCHAR(20) NOT NULL, 
	name VARCHAR(200) NOT NULL, 
	params_json TEXT NOT NULL, 
	status VARCHAR(20) NOT NULL, 
	value FLOAT, 
	worker VARCHAR(200) NOT NULL, 
	created_at FLOAT NOT NULL, 
	rung INTEGER, 
	rung_state VARCHAR(20), 
	rung_note TEXT, 
	PRIMARY KEY (id), 
	CONSTRAINT uq_config_trial UNIQUE (session, trial_number, stage)
);
INSERT INTO "bracket_configs" VALUES(1,'prev',0,'baseline','search','baseline','{"optimizer_type": "AdamW", "learning_rate": 0.0001, "lr_scheduler": "cosine", "lr_warmup_steps": 0, "batch_size": 16}','done',0.5,'vm:820',1.7965409616198885441e+09,NULL,NULL,NULL);
INSERT INTO "bracket_configs" VALUES(2,'prev',1,'curated','search','adamw-fast','{"optimizer_type": "AdamW", "learning_rate": 0.002, "lr_scheduler": "constant_with_warmup", "lr_warmup_steps": 0, "batch_size": 16}','done',0.0,'vm:820',1.79654108071994900704e+09,NULL,NULL,NULL);
CREATE TABLE bracket_ratings (
	id INTEGER NOT NULL, 
	session VARCHAR(200) NOT NULL, 
	run_id INTEGER NOT NULL, 
	prompt_index INTEGER, 
	value FLOAT NOT NULL, 
	step INTEGER, 
	created_at FLOAT NOT NULL, 
	PRIMARY KEY (id)
);
CREATE TABLE bracket_runs (
	id INTEGER NOT NULL, 
	session VARCHAR(200) NOT NULL, 
	config_id INTEGER, 
	kind VARCHAR(20) NOT NULL, 
	stage VARCHAR(20) NOT NULL, 
	label VARCHAR(200) NOT NULL, 
	seed INTEGER, 
	seed_index INTEGER, 
	params_json TEXT NOT NULL, 
	run_dir TEXT NOT NULL, 
	status VARCHAR(20) NOT NULL, 
	exit_code INTEGER, 
	failure_reason TEXT NOT NULL, 
	log_tail TEXT NOT NULL, 
	pid INTEGER, 
	pid_create_time FLOAT, 
	worker VARCHAR(200) NOT NULL, 
	max_steps INTEGER, 
	last_step INTEGER, 
	started_at FLOAT, 
	finished_at FLOAT, 
	duration_s FLOAT, 
	judges_json TEXT NOT NULL, 
	loss_json TEXT NOT NULL, 
	eval_loss_json TEXT NOT NULL, 
	samples_json TEXT NOT NULL, 
	output_dir TEXT NOT NULL, 
	launches INTEGER, 
	pause_step INTEGER, 
	restart_steps INTEGER, 
	PRIMARY KEY (id)
);
INSERT INTO "bracket_runs" VALUES(1,'prev',1,'baseline','search','baseline seed 42',42,0,'{"optimizer_type": "AdamW", "learning_rate": 0.0001, "lr_scheduler": "cosine", "lr_warmup_steps": 0, "batch_size": 16}','/sessions/prev/trials/0001-baseline-s0','done',0,'','The following values were not passed to `accelerate launch` and had defaults used instead:
	`--num_processes` was set to a value of `1`
	`--num_machines` was set to a value of `1`
	`--dynamo_backend` was set to a value of `''no''`
To avoid this warning pass in values for each of the problematic parameters or run `accelerate config`.
demo_train: 58 images at 32px, batch 16, 0.64M parameters, AdamW lr 0.0001 cosine, 4 steps, 1 thread(s), 6 held out for validation
steps: 1/4 validation loss 0.7186
steps: 2/4 validation loss 0.6862
steps: 3/4 validation loss 0.6698
steps: 4/4 loss 0.6665 avg 0.6990
steps: 4/4 validation loss 0.6652
demo_train: done in 68.8s',NULL,1796540961.54,'vm:820',4,4,1.79654096176127672191e+09,1.79654107898997974397e+09,1.17142730581000023451e+02,'{}','[[1, 0.7421495318412781], [2, 0.7189032435417175], [3, 0.6685565114021301], [4, 0.6664674878120422]]','[[1, 0.7185945510864258], [2, 0.6861891150474548], [3, 0.669795572757721], [4, 0.6651788949966431]]','[{"path": "/sessions/prev/trials/0001-baseline-s0/output/sample/demo_e000000_00_20261206071017_1.png", "step": 0, "epoch": 0, "prompt_index": 0, "seed": 1, "frame": null, "kind": "image"}, {"path": "/sessions/prev/trials/0001-baseline-s0/output/sample/demo_e000000_01_20261206071019_2.png", "step": 0, "epoch": 0, "prompt_index": 1, "seed": 2, "frame": null, "kind": "image"}, {"path": "/sessions/prev/trials/0001-baseline-s0/output/sample/demo_e000000_02_20261206071021_3.png", "step": 0, "epoch": 0, "prompt_index": 2, "seed": 3, "frame": null, "kind": "image"}, {"path": "/sessions/prev/trials/0001-baseline-s0/output/sample/demo_e000000_03_20261206071022_4.png", "step": 0, "epoch": 0, "prompt_index": 3, "seed": 4, "frame": null, "kind": "image"}, {"path": "/sessions/prev/trials/0001-baseline-s0/output/sample/demo_000001_00_20261206071027_1.png", "step": 1, "epoch": null, "prompt_index": 0, "seed": 1, "frame": null, "kind": "image"}, {"path": "/sessions/prev/trials/0001-baseline-s0/output/sample/demo_000001_01_20261206071029_2.png", "step": 1, "epoch": null, "prompt_index": 1, "seed": 2, "frame": null, "kind": "image"}, {"path": "/sessions/prev/trials/0001-baseline-s0/output/sample/demo_000001_02_20261206071032_3.png", "step": 1, "epoch": null, "prompt_index": 2, "seed": 3, "frame": null, "kind": "image"}, {"path": "/sessions/prev/trials/0001-baseline-s0/output/sample/demo_000001_03_20261206071033_4.png", "step": 1, "epoch": null, "prompt_index": 3, "seed": 4, "frame": null, "kind": "image"}, {"path": "/sessions/prev/trials/0001-baseline-s0/output/sample/demo_000002_00_20261206071038_1.png", "step": 2, "epoch": null, "prompt_index": 0, "seed": 1, "frame": null, "kind": "image"}, {"path": "/sessions/prev/trials/0001-baseline-s0/output/sample/demo_000002_01_20261206071040_2.png", "step": 2, "epoch": null, "prompt_index": 1, "seed": 2, "frame": null, "kind": "image"}, {"path": "/sessions/prev/trials/0001-baseline-s0/output/sample/demo_000002_02_20261206071042_3.png", "step": 2, "epoch": null, "prompt_index": 2, "seed": 3, "frame": null, "kind": "image"}, {"path": "/sessions/prev/trials/0001-baseline-s0/output/sample/demo_000002_03_20261206071044_4.png", "step": 2, "epoch": null, "prompt_index": 3, "seed": 4, "frame": null, "kind": "image"}, {"path": "/sessions/prev/trials/0001-baseline-s0/output/sample/demo_000003_00_20261206071049_1.png", "step": 3, "epoch": null, "prompt_index": 0, "seed": 1, "frame": null, "kind": "image"}, {"path": "/sessions/prev/trials/0001-baseline-s0/output/sample/demo_000003_01_20261206071051_2.png", "step": 3, "epoch": null, "prompt_index": 1, "seed": 2, "frame": null, "kind": "image"}, {"path": "/sessions/prev/trials/0001-baseline-s0/output/sample/demo_000003_02_20261206071053_3.png", "step": 3, "epoch": null, "prompt_index": 2, "seed": 3, "frame": null, "kind": "image"}, {"path": "/sessions/prev/trials/0001-baseline-s0/output/sample/demo_000003_03_20261206071055_4.png", "step": 3, "epoch": null, "prompt_index": 3, "seed": 4, "frame": null, "kind": "image"}, {"path": "/sessions/prev/trials/0001-baseline-s0/output/sample/demo_000004_00_20261206071100_1.png", "step": 4, "epoch": null, "prompt_index": 0, "seed": 1, "frame": null, "kind": "image"}, {"path": "/sessions/prev/trials/0001-baseline-s0/output/sample/demo_000004_01_20261206071101_2.png", "step": 4, "epoch": null, "prompt_index": 1, "seed": 2, "frame": null, "kind": "image"}, {"path": "/sessions/prev/trials/0001-baseline-s0/output/sample/demo_000004_02_20261206071104_3.png", "step": 4, "epoch": null, "prompt_index": 2, "seed": 3, "frame": null, "kind": "image"}, {"path": "/sessions/prev/trials/0001-baseline-s0/output/sample/demo_000004_03_20261206071106_4.png", "step": 4, "epoch": null, "prompt_index": 3, "seed": 4, "frame": null, "kind": "image"}]','/sessions/prev/trials/0001-baseline-s0/output',1,NULL,NULL);
INSERT INTO "bracket_runs" VALUES(2,'prev',2,'curated','search','adamw-fast seed 42',42,0,'{"optimizer_type": "AdamW", "learning_rate": 0.002, "lr_scheduler": "constant_with_warmup", "lr_warmup_steps": 0, "batch_size": 16}','/sessions/prev/trials/0002-adamw-fast-s0','done',0,'','The following values were not passed to `accelerate launch` and had defaults used instead:
	`--num_processes` was set to a value of `1`
	`--num_machines` was set to a value of `1`
	`--dynamo_backend` was set to a value of `''no''`
To avoid this warning pass in values for each of the problematic parameters or run `accelerate config`.
demo_train: 58 images at 32px, batch 16, 0.64M parameters, AdamW lr 0.002 constant_with_warmup, 4 steps, 1 thread(s), 6 held out for validation
steps: 1/4 validation loss 0.4226
steps: 2/4 validation loss 0.2741
steps: 3/4 validation loss 0.2204
steps: 4/4 loss 0.2315 avg 0.4261
steps: 4/4 validation loss 0.1709
demo_train: done in 55.4s',NULL,1796541080.76,'vm:820',4,4,1.79654108109556221958e+09,1.79654118943445253366e+09,1.08335300231000019265e+02,'{}','[[1, 0.7421495318412781], [2, 0.4508073627948761], [3, 0.27978280186653137], [4, 0.23151040077209473]]','[[1, 0.4225504398345947], [2, 0.2741280496120453], [3, 0.22041064500808716], [4, 0.17088481783866882]]','[{"path": "/sessions/prev/trials/0002-adamw-fast-s0/output/sample/demo_e000000_00_20261206071224_1.png", "step": 0, "epoch": 0, "prompt_index": 0, "seed": 1, "frame": null, "kind": "image"}, {"path": "/sessions/prev/trials/0002-adamw-fast-s0/output/sample/demo_e000000_01_20261206071226_2.png", "step": 0, "epoch": 0, "prompt_index": 1, "seed": 2, "frame": null, "kind": "image"}, {"path": "/sessions/prev/trials/0002-adamw-fast-s0/output/sample/demo_e000000_02_20261206071228_3.png", "step": 0, "epoch": 0, "prompt_index": 2, "seed": 3, "frame": null, "kind": "image"}, {"path": "/sessions/prev/trials/0002-adamw-fast-s0/output/sample/demo_e000000_03_20261206071230_4.png", "step": 0, "epoch": 0, "prompt_index": 3, "seed": 4, "frame": null, "kind": "image"}, {"path": "/sessions/prev/trials/0002-adamw-fast-s0/output/sample/demo_000001_00_20261206071234_1.png", "step": 1, "epoch": null, "prompt_index": 0, "seed": 1, "frame": null, "kind": "image"}, {"path": "/sessions/prev/trials/0002-adamw-fast-s0/output/sample/demo_000001_01_20261206071236_2.png", "step": 1, "epoch": null, "prompt_index": 1, "seed": 2, "frame": null, "kind": "image"}, {"path": "/sessions/prev/trials/0002-adamw-fast-s0/output/sample/demo_000001_02_20261206071237_3.png", "step": 1, "epoch": null, "prompt_index": 2, "seed": 3, "frame": null, "kind": "image"}, {"path": "/sessions/prev/trials/0002-adamw-fast-s0/output/sample/demo_000001_03_20261206071238_4.png", "step": 1, "epoch": null, "prompt_index": 3, "seed": 4, "frame": null, "kind": "image"}, {"path": "/sessions/prev/trials/0002-adamw-fast-s0/output/sample/demo_000002_00_20261206071242_1.png", "step": 2, "epoch": null, "prompt_index": 0, "seed": 1, "frame": null, "kind": "image"}, {"path": "/sessions/prev/trials/0002-adamw-fast-s0/output/sample/demo_000002_01_20261206071243_2.png", "step": 2, "epoch": null, "prompt_index": 1, "seed": 2, "frame": null, "kind": "image"}, {"path": "/sessions/prev/trials/0002-adamw-fast-s0/output/sample/demo_000002_02_20261206071244_3.png", "step": 2, "epoch": null, "prompt_index": 2, "seed": 3, "frame": null, "kind": "image"}, {"path": "/sessions/prev/trials/0002-adamw-fast-s0/output/sample/demo_000002_03_20261206071246_4.png", "step": 2, "epoch": null, "prompt_index": 3, "seed": 4, "frame": null, "kind": "image"}, {"path": "/sessions/prev/trials/0002-adamw-fast-s0/output/sample/demo_000003_00_20261206071249_1.png", "step": 3, "epoch": null, "prompt_index": 0, "seed": 1, "frame": null, "kind": "image"}, {"path": "/sessions/prev/trials/0002-adamw-fast-s0/output/sample/demo_000003_01_20261206071250_2.png", "step": 3, "epoch": null, "prompt_index": 1, "seed": 2, "frame": null, "kind": "image"}, {"path": "/sessions/prev/trials/0002-adamw-fast-s0/output/sample/demo_000003_02_20261206071252_3.png", "step": 3, "epoch": null, "prompt_index": 2, "seed": 3, "frame": null, "kind": "image"}, {"path": "/sessions/prev/trials/0002-adamw-fast-s0/output/sample/demo_000003_03_20261206071253_4.png", "step": 3, "epoch": null, "prompt_index": 3, "seed": 4, "frame": null, "kind": "image"}, {"path": "/sessions/prev/trials/0002-adamw-fast-s0/output/sample/demo_000004_00_20261206071255_1.png", "step": 4, "epoch": null, "prompt_index": 0, "seed": 1, "frame": null, "kind": "image"}, {"path": "/sessions/prev/trials/0002-adamw-fast-s0/output/sample/demo_000004_01_20261206071256_2.png", "step": 4, "epoch": null, "prompt_index": 1, "seed": 2, "frame": null, "kind": "image"}, {"path": "/sessions/prev/trials/0002-adamw-fast-s0/output/sample/demo_000004_02_20261206071257_3.png", "step": 4, "epoch": null, "prompt_index": 2, "seed": 3, "frame": null, "kind": "image"}, {"path": "/sessions/prev/trials/0002-adamw-fast-s0/output/sample/demo_000004_03_20261206071259_4.png", "step": 4, "epoch": null, "prompt_index": 3, "seed": 4, "frame": null, "kind": "image"}]','/sessions/prev/trials/0002-adamw-fast-s0/output',1,NULL,NULL);
CREATE TABLE bracket_sessions (
	name VARCHAR(200) NOT NULL, 
	preset_id VARCHAR(100) NOT NULL, 
	fields_json TEXT NOT NULL, 
	settings_json TEXT NOT NULL, 
	notes_json TEXT NOT NULL, 
	study_name VARCHAR(200) NOT NULL, 
	status VARCHAR(40) NOT NULL, 
	stop_requested VARCHAR(20) NOT NULL, 
	created_at FLOAT NOT NULL, 
	updated_at FLOAT NOT NULL, 
	PRIMARY KEY (name)
);
INSERT INTO "bracket_sessions" VALUES('prev','demo-cpu','{"dataset": "/data/demo-data", "trainer_python": "/opt/bracket/.venv/bin/python", "train_script": "/opt/bracket/bracket/trainer/scripts/demo_train.py", "resolution": "32", "cpu_threads": "0"}','{"budget": 2, "steps": 4, "seeds": 1, "sample_prompts": "a red circle --d 1\na blue square --d 2\na green triangle --d 3\na yellow circle --d 4", "sample_every_n_steps": null, "algorithm": "tpe", "bounds": {}, "weights": {"loss": 1.0, "human": 2.0, "vlm": 1.0, "eval_loss": 1.0, "task": 1.0, "llm_judge": 1.0}, "timeout_s": null, "base_seed": 42, "divergence_stop": true, "vlm": {}, "warm_start": true, "lr_bracket": true, "warmup_share": 0.25, "warm_start_from": [], "confirm": null, "validation_split": 0.0938, "halving": false, "eta": 3, "smallest_rung": 0.3333333333333333, "launch_share": null, "restarts": false, "rung_every": null}','["no warm-up: 25% of the 4-step runs is less than the warm-up knob''s smallest non-zero step, so baseline and curated warm-ups are set to 0", "curated ''adamw-fast'': lr_warmup_steps 5 clamped to 0 by the bounds", "curated ''sgd'': lr_warmup_steps 5 clamped to 0 by the bounds", "Validation loss: on \u2014 9% of the dataset held out (~6 of 64 images), seed 42, the same for every run; the loss judge scores the validation loss."]','prev','finished','',1.79654095746541261676e+09,1.79654119067815113072e+09);
CREATE TABLE bracket_views (
	session VARCHAR(200) NOT NULL, 
	name VARCHAR(100) NOT NULL, 
	key_json TEXT NOT NULL, 
	data_json TEXT NOT NULL, 
	updated_at FLOAT NOT NULL, 
	PRIMARY KEY (session, name)
);
CREATE TABLE bracket_workers (
	worker_id VARCHAR(200) NOT NULL, 
	session VARCHAR(200) NOT NULL, 
	host VARCHAR(200) NOT NULL, 
	pid INTEGER, 
	gpu VARCHAR(20) NOT NULL, 
	status VARCHAR(20) NOT NULL, 
	started_at FLOAT NOT NULL, 
	heartbeat_at FLOAT NOT NULL, 
	PRIMARY KEY (worker_id, session)
);
INSERT INTO "bracket_workers" VALUES('vm:820','prev','vm',820,'','stopped',1.79654095965964865689e+09,1.79654119067645549768e+09);
CREATE TABLE studies (
	study_id INTEGER NOT NULL, 
	study_name VARCHAR(512) NOT NULL, 
	PRIMARY KEY (study_id)
);
INSERT INTO "studies" VALUES(1,'prev');
INSERT INTO "studies" VALUES(2,'prev-verdict');
CREATE TABLE study_directions (
	study_direction_id INTEGER NOT NULL, 
	direction VARCHAR(8) NOT NULL, 
	study_id INTEGER NOT NULL, 
	objective INTEGER NOT NULL, 
	PRIMARY KEY (study_direction_id), 
	UNIQUE (study_id, objective), 
	FOREIGN KEY(study_id) REFERENCES studies (study_id)
);
INSERT INTO "study_directions" VALUES(1,'MINIMIZE',1,0);
INSERT INTO "study_directions" VALUES(2,'MINIMIZE',2,0);
CREATE TABLE study_system_attributes (
	study_system_attribute_id INTEGER NOT NULL, 
	study_id INTEGER, 
	"key" VARCHAR(512), 
	value_json TEXT, 
	PRIMARY KEY (study_system_attribute_id), 
	UNIQUE (study_id, "key"), 
	FOREIGN KEY(study_id) REFERENCES studies (study_id)
);
CREATE TABLE study_user_attributes (
	study_user_attribute_id INTEGER NOT NULL, 
	study_id INTEGER, 
	"key" VARCHAR(512), 
	value_json TEXT, 
	PRIMARY KEY (study_user_attribute_id), 
	UNIQUE (study_id, "key"), 
	FOREIGN KEY(study_id) REFERENCES studies (study_id)
);
INSERT INTO "study_user_attributes" VALUES(1,1,'current_scores','{"0": 1.0, "1": 0.0}');
INSERT INTO "study_user_attributes" VALUES(2,2,'verdict','"Best config is ''adamw-fast'' at 4 steps (quality 10.00, 1 seed), ahead of ''baseline'' (quality 1.00; higher is better); with fewer than 2 seeds per config no significance claim is possible: rerun the top configs with more seeds."');
INSERT INTO "study_user_attributes" VALUES(3,2,'source_study','"prev"');
INSERT INTO "study_user_attributes" VALUES(4,2,'bracket_digest','"ed86afbe82ff4aa0cc7f760af61cf5eb8e61a5bd"');
INSERT INTO "study_user_attributes" VALUES(5,1,'verdict_study','"prev-verdict"');
CREATE TABLE trial_heartbeats (
	trial_heartbeat_id INTEGER NOT NULL, 
	trial_id INTEGER NOT NULL, 
	heartbeat DATETIME NOT NULL, 
	PRIMARY KEY (trial_heartbeat_id), 
	UNIQUE (trial_id), 
	FOREIGN KEY(trial_id) REFERENCES trials (trial_id)
);
CREATE TABLE trial_intermediate_values (
	trial_intermediate_value_id INTEGER NOT NULL, 
	trial_id INTEGER NOT NULL, 
	step INTEGER NOT NULL, 
	intermediate_value FLOAT, 
	intermediate_value_type VARCHAR(7) NOT NULL, 
	PRIMARY KEY (trial_intermediate_value_id), 
	UNIQUE (trial_id, step), 
	FOREIGN KEY(trial_id) REFERENCES trials (trial_id)
);
CREATE TABLE trial_params (
	param_id INTEGER NOT NULL, 
	trial_id INTEGER, 
	param_name VARCHAR(512), 
	param_value FLOAT, 
	distribution_json TEXT, 
	PRIMARY KEY (param_id), 
	UNIQUE (trial_id, param_name), 
	FOREIGN KEY(trial_id) REFERENCES trials (trial_id)
);
INSERT INTO "trial_params" VALUES(1,1,'optimizer_type',0.0,'{"name": "CategoricalDistribution", "attributes": {"choices": ["AdamW", "Adam", "RAdam", "SGD", "Adagrad"]}}');
INSERT INTO "trial_params" VALUES(2,1,'learning_rate',0.0001,'{"name": "FloatDistribution", "attributes": {"step": null, "low": 1e-05, "high": 0.03, "log": true}}');
INSERT INTO "trial_params" VALUES(3,1,'lr_scheduler',2.0,'{"name": "CategoricalDistribution", "attributes": {"choices": ["constant", "constant_with_warmup", "cosine", "linear"]}}');
INSERT INTO "trial_params" VALUES(4,1,'lr_warmup_steps',0.0,'{"name": "IntDistribution", "attributes": {"log": false, "step": 5, "low": 0, "high": 0}}');
INSERT INTO "trial_params" VALUES(5,2,'optimizer_type',0.0,'{"name": "CategoricalDistribution", "attributes": {"choices": ["AdamW", "Adam", "RAdam", "SGD", "Adagrad"]}}');
INSERT INTO "trial_params" VALUES(6,2,'learning_rate',0.002,'{"name": "FloatDistribution", "attributes": {"step": null, "low": 1e-05, "high": 0.03, "log": true}}');
INSERT INTO "trial_params" VALUES(7,2,'lr_scheduler',1.0,'{"name": "CategoricalDistribution", "attributes": {"choices": ["constant", "constant_with_warmup", "cosine", "linear"]}}');
INSERT INTO "trial_params" VALUES(8,2,'lr_warmup_steps',0.0,'{"name": "IntDistribution", "attributes": {"log": false, "step": 5, "low": 0, "high": 0}}');
INSERT INTO "trial_params" VALUES(9,5,'optimizer_type',0.0,'{"name": "CategoricalDistribution", "attributes": {"choices": ["AdamW", "Adam", "RAdam", "SGD", "Adagrad"]}}');
INSERT INTO "trial_params" VALUES(10,5,'learning_rate',0.0001,'{"name": "FloatDistribution", "attributes": {"step": null, "low": 1e-05, "high": 0.03, "log": true}}');
INSERT INTO "trial_params" VALUES(11,5,'lr_scheduler',2.0,'{"name": "CategoricalDistribution", "attributes": {"choices": ["constant", "constant_with_warmup", "cosine", "linear"]}}');
INSERT INTO "trial_params" VALUES(12,5,'lr_warmup_steps',0.0,'{"name": "IntDistribution", "attributes": {"log": false, "step": 5, "low": 0, "high": 0}}');
INSERT INTO "trial_params" VALUES(13,6,'optimizer_type',0.0,'{"name": "CategoricalDistribution", "attributes": {"choices": ["AdamW", "Adam", "RAdam", "SGD", "Adagrad"]}}');
INSERT INTO "trial_params" VALUES(14,6,'learning_rate',0.002,'{"name": "FloatDistribution", "attributes": {"step": null, "low": 1e-05, "high": 0.03, "log": true}}');
INSERT INTO "trial_params" VALUES(15,6,'lr_scheduler',1.0,'{"name": "CategoricalDistribution", "attributes": {"choices": ["constant", "constant_with_warmup", "cosine", "linear"]}}');
INSERT INTO "trial_params" VALUES(16,6,'lr_warmup_steps',0.0,'{"name": "IntDistribution", "attributes": {"log": false, "step": 5, "low": 0, "high": 0}}');
CREATE TABLE trial_system_attributes (
	trial_system_attribute_id INTEGER NOT NULL, 
	trial_id INTEGER, 
	"key" VARCHAR(512), 
	value_json TEXT, 
	PRIMARY KEY (trial_system_attribute_id), 
	UNIQUE (trial_id, "key"), 
	FOREIGN KEY(trial_id) REFERENCES trials (trial_id)
);
INSERT INTO "trial_system_attributes" VALUES(1,1,'fixed_params','{"optimizer_type": "AdamW", "learning_rate": 0.0001, "lr_scheduler": "cosine", "lr_warmup_steps": 0}');
INSERT INTO "trial_system_attributes" VALUES(2,2,'fixed_params','{"optimizer_type": "AdamW", "learning_rate": 0.002, "lr_scheduler": "constant_with_warmup", "lr_warmup_steps": 0}');
INSERT INTO "trial_system_attributes" VALUES(3,3,'fixed_params','{"optimizer_type": "RAdam", "learning_rate": 0.003, "lr_scheduler": "constant", "lr_warmup_steps": 0}');
INSERT INTO "trial_system_attributes" VALUES(4,4,'fixed_params','{"optimizer_type": "SGD", "learning_rate": 0.02, "lr_scheduler": "cosine", "lr_warmup_steps": 0}');
CREATE TABLE trial_user_attributes (
	trial_user_attribute_id INTEGER NOT NULL, 
	trial_id INTEGER, 
	"key" VARCHAR(512), 
	value_json TEXT, 
	PRIMARY KEY (trial_user_attribute_id), 
	UNIQUE (trial_id, "key"), 
	FOREIGN KEY(trial_id) REFERENCES trials (trial_id)
);
INSERT INTO "trial_user_attributes" VALUES(1,1,'kind','"baseline"');
INSERT INTO "trial_user_attributes" VALUES(2,1,'name','"baseline"');
INSERT INTO "trial_user_attributes" VALUES(3,1,'source','"diffusers examples/unconditional_image_generation defaults"');
INSERT INTO "trial_user_attributes" VALUES(4,2,'kind','"curated"');
INSERT INTO "trial_user_attributes" VALUES(5,2,'name','"adamw-fast"');
INSERT INTO "trial_user_attributes" VALUES(6,2,'source','"Ho et al. 2020 DDPM (Adam 2e-4, warmup) scaled for a 1M-parameter UNet"');
INSERT INTO "trial_user_attributes" VALUES(7,3,'kind','"curated"');
INSERT INTO "trial_user_attributes" VALUES(8,3,'name','"radam"');
INSERT INTO "trial_user_attributes" VALUES(9,3,'source','"Liu et al. 2020, RAdam: rectified warmup"');
INSERT INTO "trial_user_attributes" VALUES(10,4,'kind','"curated"');
INSERT INTO "trial_user_attributes" VALUES(11,4,'name','"sgd"');
INSERT INTO "trial_user_attributes" VALUES(12,4,'source','"PyTorch SGD rule of thumb: ~10x the Adam learning rate"');
INSERT INTO "trial_user_attributes" VALUES(13,1,'why','"baseline: the by-hand config"');
INSERT INTO "trial_user_attributes" VALUES(14,2,'why','"curated known-good config"');
INSERT INTO "trial_user_attributes" VALUES(15,3,'bracket_note','"not trained: the search''s budget ran out before this warm-start config''s turn"');
INSERT INTO "trial_user_attributes" VALUES(16,4,'bracket_note','"not trained: the search''s budget ran out before this warm-start config''s turn"');
INSERT INTO "trial_user_attributes" VALUES(17,5,'config','"baseline"');
INSERT INTO "trial_user_attributes" VALUES(18,5,'kind','"baseline"');
INSERT INTO "trial_user_attributes" VALUES(19,5,'rank','2');
INSERT INTO "trial_user_attributes" VALUES(20,5,'trial','0');
INSERT INTO "trial_user_attributes" VALUES(21,6,'config','"adamw-fast"');
INSERT INTO "trial_user_attributes" VALUES(22,6,'kind','"curated"');
INSERT INTO "trial_user_attributes" VALUES(23,6,'rank','1');
INSERT INTO "trial_user_attributes" VALUES(24,6,'trial','1');
CREATE TABLE trial_values (
	trial_value_id INTEGER NOT NULL, 
	trial_id INTEGER NOT NULL, 
	objective INTEGER NOT NULL, 
	value FLOAT, 
	value_type VARCHAR(7) NOT NULL, 
	PRIMARY KEY (trial_value_id), 
	UNIQUE (trial_id, objective), 
	FOREIGN KEY(trial_id) REFERENCES trials (trial_id)
);
INSERT INTO "trial_values" VALUES(1,1,0,0.5,'FINITE');
INSERT INTO "trial_values" VALUES(2,2,0,0.0,'FINITE');
INSERT INTO "trial_values" VALUES(3,5,0,1.0,'FINITE');
INSERT INTO "trial_values" VALUES(4,6,0,0.0,'FINITE');
CREATE TABLE trials (
	trial_id INTEGER NOT NULL, 
	number INTEGER, 
	study_id INTEGER, 
	state VARCHAR(8) NOT NULL, 
	datetime_start DATETIME, 
	datetime_complete DATETIME, 
	PRIMARY KEY (trial_id), 
	FOREIGN KEY(study_id) REFERENCES studies (study_id)
);
INSERT INTO "trials" VALUES(1,0,1,'COMPLETE','2026-12-06 07:09:20.860376','2026-12-06 07:11:19.385872');
INSERT INTO "trials" VALUES(2,1,1,'COMPLETE','2026-12-06 07:11:19.778606','2026-12-06 07:13:09.525651');
INSERT INTO "trials" VALUES(3,2,1,'FAIL',NULL,'2026-12-06 07:13:09.781061');
INSERT INTO "trials" VALUES(4,3,1,'FAIL',NULL,'2026-12-06 07:13:09.829111');
INSERT INTO "trials" VALUES(5,0,2,'COMPLETE','2026-12-06 07:13:09.921989','2026-12-06 07:13:09.921989');
INSERT INTO "trials" VALUES(6,1,2,'COMPLETE','2026-12-06 07:13:09.922154','2026-12-06 07:13:09.922154');
CREATE TABLE version_info (
	version_info_id INTEGER NOT NULL, 
	schema_version INTEGER, 
	library_version VARCHAR(256), 
	PRIMARY KEY (version_info_id), 
	CHECK (version_info_id=1)
);
INSERT INTO "version_info" VALUES(1,12,'5.1.0');
CREATE INDEX ix_bracket_configs_session ON bracket_configs (session);
CREATE INDEX ix_bracket_runs_session ON bracket_runs (session);
CREATE INDEX ix_bracket_runs_config_id ON bracket_runs (config_id);
CREATE INDEX ix_bracket_ratings_session ON bracket_ratings (session);
CREATE INDEX ix_bracket_comparisons_session ON bracket_comparisons (session);
CREATE UNIQUE INDEX ix_studies_study_name ON studies (study_name);
CREATE INDEX ix_trials_study_id ON trials (study_id);
COMMIT;
