// Package recorder keeps the Kubernetes side's history: it watches the objects the lab's
// evidence is made of (Pods, Nodes, NodeClaims, NodePools, EC2NodeClasses, PodDisruptionBudgets, Events) and appends
// every change to a JSON-lines file. Kubernetes forgets a consolidated NodeClaim or a deleted
// pod; the history does not, so evidence can still name them and their timestamps — as the EC2
// emulator's audit trail does for the AWS side.
//
// It imports client-go only; labs read the file with Read.
package recorder
