package main

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/utils/ptr"

	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/controller/jobframework"
	"sigs.k8s.io/kueue/pkg/features"
	"sigs.k8s.io/kueue/pkg/workload"
)

// difference is the first place Kueue's pod sets and the Workload's part, in the order
// Kueue's pkg/util/equality compares them: the number of pod sets, then per pod set its
// count, minCount, tolerations (unless the Workload is admitted), init containers and
// containers. Path is JSON field names from the pod set (`template.spec.containers[0].env[2].value`);
// a value absent on one side is null.
type difference struct {
	PodSet   string `json:"podSet"`
	Path     string `json:"path"`
	Kueue    any    `json:"kueue"`
	Workload any    `json:"workload"`
	Reason   string `json:"reason,omitempty"`
}

// firstDifference explains a run Kueue did not find equivalent. Kueue compares the pod
// sets only once the owner's name, the owner's UID (FinishOrphanedWorkloads) and the
// maximum execution time agree, so those come first.
func firstDifference(job jobframework.GenericJob, wl *kueue.Workload, derived []kueue.PodSet) *difference {
	if limit := jobframework.MaximumExecutionTimeSeconds(job); ptr.Deref(limit, -1) != ptr.Deref(wl.Spec.MaximumExecutionTimeSeconds, -1) {
		return &difference{Path: "spec.maximumExecutionTimeSeconds", Kueue: limit, Workload: wl.Spec.MaximumExecutionTimeSeconds}
	}
	if !features.Enabled(features.PartialAdmission) {
		for i := range derived {
			derived[i].MinCount = nil
		}
	}
	if len(derived) != len(wl.Spec.PodSets) {
		return &difference{Path: "spec.podSets", Kueue: len(derived), Workload: len(wl.Spec.PodSets), Reason: "the number of pod sets differs"}
	}
	ignoreTolerations := workload.IsAdmitted(wl)
	for i := range derived {
		a, b := &derived[i], &wl.Spec.PodSets[i]
		name := string(b.Name)
		if a.Name != b.Name {
			name = fmt.Sprintf("%s (Kueue's %s)", b.Name, a.Name)
		}
		if a.Count != b.Count {
			return &difference{PodSet: name, Path: "count", Kueue: a.Count, Workload: b.Count}
		}
		if ptr.Deref(a.MinCount, -1) != ptr.Deref(b.MinCount, -1) {
			return &difference{PodSet: name, Path: "minCount", Kueue: a.MinCount, Workload: b.MinCount}
		}
		parts := []struct {
			path string
			a, b any
			skip bool
		}{
			{"template.spec.tolerations", a.Template.Spec.Tolerations, b.Template.Spec.Tolerations, ignoreTolerations},
			{"template.spec.initContainers", a.Template.Spec.InitContainers, b.Template.Spec.InitContainers, false},
			{"template.spec.containers", a.Template.Spec.Containers, b.Template.Spec.Containers, false},
		}
		for _, part := range parts {
			if part.skip || equality.Semantic.DeepEqual(part.a, part.b) {
				continue
			}
			if d := firstInList(part.path, part.a, part.b); d != nil {
				d.PodSet = name
				return d
			}
		}
	}
	return &difference{Reason: "the pod sets compare equal here; Kueue compared them with an admitted Workload's node selectors merged in (expectedRunningPodSets), or the owner differs"}
}

// firstInList finds the first element that is not semantically equal (so a Quantity
// written two ways is no difference), then the first JSON field within it.
func firstInList(path string, a, b any) *difference {
	av, bv := reflect.ValueOf(a), reflect.ValueOf(b)
	for i := 0; i < av.Len() && i < bv.Len(); i++ {
		x, y := av.Index(i).Interface(), bv.Index(i).Interface()
		if equality.Semantic.DeepEqual(x, y) {
			continue
		}
		where := fmt.Sprintf("%s[%d]", path, i)
		if d := firstJSON(where, asJSON(x), asJSON(y)); d != nil {
			return d
		}
		return &difference{Path: where, Kueue: x, Workload: y}
	}
	return &difference{Path: path, Kueue: av.Len(), Workload: bv.Len(), Reason: "the number of entries differs"}
}

func asJSON(v any) any {
	raw, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	var out any
	if err := json.Unmarshal(raw, &out); err != nil {
		return string(raw)
	}
	return out
}

// firstJSON walks two JSON values in field-name order and list order; nil when equal.
func firstJSON(path string, a, b any) *difference {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok {
			break
		}
		keys := make([]string, 0, len(x)+len(y))
		for k := range x {
			keys = append(keys, k)
		}
		for k := range y {
			if _, seen := x[k]; !seen {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		for _, k := range keys {
			if d := firstJSON(path+"."+k, x[k], y[k]); d != nil {
				return d
			}
		}
		return nil
	case []any:
		y, ok := b.([]any)
		if !ok {
			break
		}
		for i := 0; i < len(x) && i < len(y); i++ {
			if d := firstJSON(fmt.Sprintf("%s[%d]", path, i), x[i], y[i]); d != nil {
				return d
			}
		}
		if len(x) != len(y) {
			return &difference{Path: path, Kueue: len(x), Workload: len(y), Reason: "the number of entries differs"}
		}
		return nil
	}
	if reflect.DeepEqual(a, b) {
		return nil
	}
	return &difference{Path: path, Kueue: a, Workload: b}
}
