// Package main only warms the build cache; deleted once real packages import these.
package main

import (
	_ "github.com/aws/aws-sdk-go-v2/config"
	_ "github.com/aws/aws-sdk-go-v2/service/ec2"
	_ "github.com/urfave/cli/v2"
	_ "go.etcd.io/bbolt"
	_ "go.etcd.io/etcd/server/v3/embed"
	_ "k8s.io/kubectl/pkg/cmd"
	_ "k8s.io/kubernetes/cmd/kube-apiserver/app"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager/app"
	_ "k8s.io/kubernetes/cmd/kube-scheduler/app"
	_ "sigs.k8s.io/karpenter/kwok/cloudprovider"
	_ "sigs.k8s.io/karpenter/pkg/controllers"
	_ "sigs.k8s.io/karpenter/pkg/operator"
	_ "sigs.k8s.io/kind/pkg/cluster"
	_ "sigs.k8s.io/kwok/pkg/kwok/controllers"
)

func main() {}
