package accesskeys

const (
	// Learner is what `karplab env` gives the learner's aws CLI.
	Learner = "AKIAKARPLABLEARNER01"
	// Karpenter is the Karpenter controller's credential.
	Karpenter = "AKIAKARPENTERCONTROL"
	// Kubelet is the simulated kubelets' credential: on a real node, the instance profile's.
	Kubelet = "AKIAKARPLABNODEROLE0"
	// Grader signs the graders' EC2 reads.
	Grader = "AKIAKARPLABGRADER000"
	// CIDeploy is the CI pipeline of the denied path: it may read EC2 but never launch.
	CIDeploy = "AKIAKARPLABCIDEPLOY1"
	// BackupJob signs orphaned-storage's nightly backup job's snapshots.
	BackupJob = "AKIAZIBABACKUPJOB001"
	// DummySecret signs every caller's requests.
	DummySecret = "karplab-dummy-secret-access-key-0000000"
)

// Who names the caller behind key for a reader ("learner", "Karpenter"), or returns key
// when it is none of the lab's own.
func Who(key string) string {
	switch key {
	case Karpenter:
		return "Karpenter"
	case Learner:
		return "learner"
	case Kubelet:
		return "node role"
	case Grader:
		return "grader"
	}
	return key
}
