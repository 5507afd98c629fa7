"""Work coordination: runs and chunks claimed by one task with a heartbeat, tasks sent by
name, the reaper of silent work and the workers' own pulse."""
