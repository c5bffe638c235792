// Command kueueparity asks Kueue v0.19.2's own code whether prebuilt Workloads match their
// jobs: for each run (a Trainer TrainJob or a batch/v1 Job, and the Workload written for it,
// both as an API server returned them) it derives the pod sets the way Kueue's job
// integrations do (GenericJob.PodSets, through jobframework.JobPodSets) and runs Kueue's
// jobframework.EquivalentToWorkload, the check whose failure finishes a prebuilt Workload
// as OutOfSync. It prints one JSON verdict per run; a run Kueue does not find equivalent
// also gets the first difference (pod set, field path, both values).
//
// Input (stdin, JSON):
//
//	{"objects": [TrainingRuntime | ClusterTrainingRuntime | ResourceFlavor, ...],
//	 "runs": [{"job": TrainJob | Job, "workload": Workload, "start": bool}, ...]}
//
// The objects are what Kueue and Trainer read through their client (a runtime's template,
// an admitted Workload's flavors); they are served from controller-runtime's fake client.
// Kueue's TrainJob integration dry-run-creates a Workload to have the API server default
// its pod sets; that create goes to the server named by -kubeconfig, which must serve the
// Workload CRD (a TrainJob run without -kubeconfig is reported as an error).
//
// Each job first gets what Kueue's webhooks would have done to it (admissionDefaults);
// with "start", an admitted Workload's job is then started from it as Kueue does (start),
// so the check sees the job as it runs. Input that is not a run at all (undecodable, a
// kind Kueue has no integration for here) stops the tool with exit status 2; anything
// Kueue's own code answers with an error is that run's "error".
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/go-logr/logr"
	kftrainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"
	kftrainerruntimecore "github.com/kubeflow/trainer/v2/pkg/runtime/core"
	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	jobsetapi "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/constants"
	"sigs.k8s.io/kueue/pkg/controller/jobframework"
	"sigs.k8s.io/kueue/pkg/controller/jobs/job"
	"sigs.k8s.io/kueue/pkg/controller/jobs/trainjob"
	"sigs.k8s.io/kueue/pkg/podset"
	"sigs.k8s.io/kueue/pkg/workload"
)

// input is what stdin holds.
type input struct {
	Objects []json.RawMessage `json:"objects"`
	Runs    []runInput        `json:"runs"`
}

// runInput is one run: the job, its Workload, and whether to start the job first.
type runInput struct {
	Job      json.RawMessage `json:"job"`
	Workload json.RawMessage `json:"workload"`
	// Start: the Workload is admitted (status.admission); start the job from it the way
	// Kueue does (RunWithPodSetsInfo: the flavors' node labels and tolerations, Kueue's
	// runtime patch on a TrainJob, unsuspended) before the check.
	Start bool `json:"start,omitempty"`
}

// verdict is one run's answer.
type verdict struct {
	Kind       string         `json:"kind"`
	Started    bool           `json:"started,omitempty"`
	Namespace  string         `json:"namespace"`
	Name       string         `json:"name"`
	Workload   string         `json:"workload"`
	State      string         `json:"state"`
	Equivalent bool           `json:"equivalent"`
	Error      string         `json:"error,omitempty"`
	Difference *difference    `json:"difference,omitempty"`
	PodSets    []kueue.PodSet `json:"podSets"`
}

// output is what stdout gets.
type output struct {
	Kueue   string    `json:"kueue"`
	Trainer string    `json:"trainer"`
	Runs    []verdict `json:"runs"`
}

// The releases go.mod pins; build.sh checks that they agree with it.
const (
	kueueRelease   = "v0.19.2"
	trainerRelease = "v2.2.1"
)

// workers is how many runs are judged at once.
const workers = 4

func newScheme() *runtime.Scheme {
	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(kueue.AddToScheme(scheme))
	utilruntime.Must(kftrainer.AddToScheme(scheme))
	utilruntime.Must(jobsetapi.AddToScheme(scheme))
	return scheme
}

// serverCreates is the fake client, except that a create (Kueue's dry-run Workload) goes to
// the real API server, which applies the Workload CRD's defaults.
type serverCreates struct {
	client.Client
	server client.Client
}

func (c serverCreates) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	if c.server == nil {
		return errors.New("kueueparity: Kueue dry-run-creates a Workload here to default its pod sets; pass -kubeconfig for an API server serving the Workload CRD")
	}
	return c.server.Create(ctx, obj, opts...)
}

// noIndexes stands in for the manager's field indexer: Trainer's runtimes register the
// indexes their controllers list TrainJobs by, and nothing here lists by field.
type noIndexes struct{}

func (noIndexes) IndexField(context.Context, client.Object, string, client.IndexerFunc) error {
	return nil
}

func main() {
	// A flag set of its own: controller-runtime registers a global -kubeconfig flag.
	flags := flag.NewFlagSet("kueueparity", flag.ExitOnError)
	kubeconfig := flags.String("kubeconfig", "", "kubeconfig of the API server that dry-runs Kueue's Workload create (TrainJob runs need it)")
	_ = flags.Parse(os.Args[1:])
	if err := run(os.Stdin, os.Stdout, *kubeconfig); err != nil {
		fmt.Fprintln(os.Stderr, "kueueparity:", err)
		os.Exit(2)
	}
}

func run(in io.Reader, out io.Writer, kubeconfig string) error {
	ctrl.SetLogger(logr.Discard())
	ctx := context.Background()
	scheme := newScheme()
	decoder := serializer.NewCodecFactory(scheme).UniversalDeserializer()

	var request input
	raw, err := io.ReadAll(in)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(raw, &request); err != nil {
		return fmt.Errorf("stdin is not the expected JSON: %w", err)
	}
	builder := fake.NewClientBuilder().WithScheme(scheme)
	for i, rawObj := range request.Objects {
		obj, _, err := decoder.Decode(rawObj, nil, nil)
		if err != nil {
			return fmt.Errorf("objects[%d]: %w", i, err)
		}
		cobj, ok := obj.(client.Object)
		if !ok {
			return fmt.Errorf("objects[%d]: %T is not an object", i, obj)
		}
		builder = builder.WithObjects(cobj)
	}
	var server client.Client
	if kubeconfig != "" {
		config, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
		if err != nil {
			return err
		}
		if server, err = client.New(config, client.Options{Scheme: scheme}); err != nil {
			return err
		}
	}
	c := serverCreates{Client: builder.Build(), server: server}
	// Trainer's runtime registry, as Kueue's TrainJob reconciler sets it up (core.New).
	if _, err := kftrainerruntimecore.New(ctx, c, noIndexes{}, nil); err != nil {
		return fmt.Errorf("trainer runtimes: %w", err)
	}

	// Runs are judged a few at a time (each TrainJob costs two dry-run creates on the
	// server); the verdicts keep the input's order.
	result := output{Kueue: kueueRelease, Trainer: trainerRelease, Runs: make([]verdict, len(request.Runs))}
	errs := make([]error, len(request.Runs))
	next := make(chan int)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := range next {
				result.Runs[i], errs[i] = judge(ctx, c, decoder, request.Runs[i])
			}
		})
	}
	for i := range request.Runs {
		next <- i
	}
	close(next)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			return fmt.Errorf("runs[%d]: %w", i, err)
		}
	}
	encoder := json.NewEncoder(out)
	encoder.SetIndent("", "  ")
	return encoder.Encode(result)
}

// judge runs Kueue's check on one run; an error is input that is not a run at all.
func judge(ctx context.Context, c serverCreates, decoder runtime.Decoder, r runInput) (verdict, error) {
	obj, _, err := decoder.Decode(r.Job, nil, nil)
	if err != nil {
		return verdict{}, fmt.Errorf("job: %w", err)
	}
	generic, err := genericJob(obj)
	if err != nil {
		return verdict{}, err
	}
	wlObj, _, err := decoder.Decode(r.Workload, nil, nil)
	if err != nil {
		return verdict{}, fmt.Errorf("workload: %w", err)
	}
	wl, ok := wlObj.(*kueue.Workload)
	if !ok {
		return verdict{}, fmt.Errorf("workload: %T is not a kueue.x-k8s.io/v1beta2 Workload", wlObj)
	}
	admissionDefaults(generic)
	jobObj := generic.Object()
	v := verdict{
		Kind:      generic.GVK().Kind,
		Namespace: jobObj.GetNamespace(),
		Name:      jobObj.GetName(),
		Workload:  wl.Name,
		State:     "queued",
		PodSets:   []kueue.PodSet{},
	}
	if workload.HasQuotaReservation(wl) {
		v.State = "admitted"
	}
	if r.Start {
		if err := start(ctx, c, generic, wl); err != nil {
			v.Error = "start: " + err.Error()
			return v, nil
		}
		v.Started = true
		obj = generic.Object()
	}
	// What EnsurePrebuiltWorkloadOwnership does before the check (its Update left out).
	if err := ctrl.SetControllerReference(jobObj, wl, c.Scheme()); err != nil {
		v.Error = "ownership: " + err.Error()
		return v, nil
	}
	// Kueue's derivation on a copy, for the report and the difference; the check below
	// derives again from the job itself, as Kueue does.
	copied, _ := genericJob(obj.DeepCopyObject())
	admissionDefaults(copied)
	podSets, err := jobframework.JobPodSets(ctx, copied, c)
	if err != nil {
		v.Error = "Kueue's pod sets: " + err.Error()
		return v, nil
	}
	v.PodSets = podSets
	equivalent, err := jobframework.EquivalentToWorkload(ctx, c, generic, wl)
	if err != nil {
		v.Error = "EquivalentToWorkload: " + err.Error()
		return v, nil
	}
	v.Equivalent = equivalent
	if !equivalent {
		v.Difference = firstDifference(generic, wl, podSets)
	}
	return v, nil
}

// genericJob is Kueue's integration for the job's kind (its pkg/controller/jobs/...).
func genericJob(obj runtime.Object) (jobframework.GenericJob, error) {
	switch typed := obj.(type) {
	case *batchv1.Job:
		return (*job.Job)(typed), nil
	case *kftrainer.TrainJob:
		return (*trainjob.TrainJob)(typed), nil
	default:
		return nil, fmt.Errorf("job: %T is neither a batch/v1 Job nor a TrainJob", obj)
	}
}

// start does to the job what Kueue's startJob does once the Workload is admitted: the pod
// set infos from the admission (each flavor's node labels and tolerations, Kueue's pod-set
// label; jobframework's getPodSetsInfoFromStatus, whose other additions are annotations
// and labels Kueue never compares) handed to the job's own RunWithPodSetsInfo. A
// TrainJob's writes its runtime patch through the client, so the job is put into the
// fake client first and changed there.
func start(ctx context.Context, c serverCreates, job jobframework.GenericJob, wl *kueue.Workload) error {
	if !workload.HasQuotaReservation(wl) || wl.Status.Admission == nil {
		return errors.New("the Workload has no quota reservation (status.admission and a QuotaReserved condition)")
	}
	if len(wl.Status.Admission.PodSetAssignments) != len(wl.Spec.PodSets) {
		return fmt.Errorf("%d pod set assignments for %d pod sets", len(wl.Status.Admission.PodSetAssignments), len(wl.Spec.PodSets))
	}
	infos := make([]podset.PodSetInfo, 0, len(wl.Status.Admission.PodSetAssignments))
	for i := range wl.Status.Admission.PodSetAssignments {
		assignment := &wl.Status.Admission.PodSetAssignments[i]
		info, err := podset.FromAssignment(ctx, c, assignment, &wl.Spec.PodSets[i])
		if err != nil {
			return err
		}
		info.Labels[constants.PodSetLabel] = string(assignment.Name)
		infos = append(infos, info)
	}
	obj := job.Object()
	obj.SetResourceVersion("")
	if err := c.Client.Create(ctx, obj); err != nil {
		return err
	}
	return job.RunWithPodSetsInfo(ctx, c, infos)
}

// kueueRuntimePatch is the manager name of the runtime patch Kueue owns on a TrainJob.
const kueueRuntimePatch = "kueue.x-k8s.io/manager"

// admissionDefaults does what Kueue's mutating webhooks do to a job with a queue name on
// its way into a cluster, where the test's API server has no Kueue webhook: it is
// suspended, and a TrainJob gets Kueue's own empty runtime patch (TrainJobWebhook.Default),
// which RunWithPodSetsInfo later fills. Their other defaults (a default LocalQueue or
// priority class, managedBy for MultiKueue) touch nothing Kueue compares.
func admissionDefaults(job jobframework.GenericJob) {
	if !job.IsSuspended() && jobframework.QueueNameForObject(job.Object()) != "" {
		job.Suspend()
	}
	tj, ok := job.(*trainjob.TrainJob)
	if !ok {
		return
	}
	for _, patch := range tj.Spec.RuntimePatches {
		if patch.Manager == kueueRuntimePatch {
			return
		}
	}
	tj.Spec.RuntimePatches = append(tj.Spec.RuntimePatches, kftrainer.RuntimePatch{
		Manager: kueueRuntimePatch,
		TrainingRuntimeSpec: &kftrainer.TrainingRuntimeSpecPatch{
			Template: &kftrainer.JobSetTemplatePatch{Spec: &kftrainer.JobSetSpecPatch{}},
		},
	})
}
