// Package bulkgen writes benchmark input for cmd/bulkload to stdout:
// precomputed-fingerprint lines ("id,hex fingerprint,unix seconds") or
// ~1 KB JSON Lines text documents built from a small built-in vocabulary
// (English and Chinese), with a fraction of near-copies. Deterministic for
// a seed.
//
//	go run ./scripts/bench/bulkload -n 10000000 -kind fp | gzip -1 > fps.csv.gz
//	go run ./scripts/bench/bulkload -n 1000000 -kind docs > docs.jsonl
//
// The loader's benchmark (BENCHMARKS.md; benchmarks/*-bulkload.md): load with
// cmd/bulkload under /usr/bin/time (wall, CPU, peak RSS against --memory),
// then check with scripts/bench/storelookup -sizes -check (bytes per fingerprint per
// table, sampled lookups against brute force). The times span one year; for
// the 10^8 run give a NEW index one bucket per row with --bucket 8760h:
//
//	go run ./scripts/bench/bulkload -n 100000000 -kind fp -seed 2 > fp100m.csv
//	/usr/bin/time -f "%e s %U user %M KB" bulkload --data-dir d100 --bucket 8760h --memory 2GiB --progress lines fp100m.csv
//	go run ./scripts/bench/storelookup -data-dir d100 -input fp100m.csv -sizes -check 20 -goroutines ''
package bulkgen

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
)

var en = strings.Fields(`market bank rate inflation growth wage policy central economy trade export import
energy oil gas price supply demand factory worker union strike election vote minister parliament court
judge law reform tax budget deficit debt bond yield stock share investor company profit loss revenue
railway station train bus airport flight port ship cargo harbour river bridge road traffic city council
school student teacher university research science robot software chip data network cloud security
hospital doctor patient health vaccine disease climate rain storm flood drought harvest farmer crop
museum artist music film festival football match team coach player season league record weather`)

var zh = strings.Fields(`市场 银行 利率 通胀 增长 工资 政策 经济 贸易 出口 进口 能源 石油 价格 供应 需求 工厂 工人
选举 部长 法院 改革 税收 预算 债务 股票 投资者 公司 利润 收入 铁路 车站 列车 公交 机场 航班 港口
货物 河流 桥梁 道路 交通 城市 学校 学生 教师 大学 研究 科学 机器人 软件 芯片 数据 网络 安全 医院
医生 患者 健康 疫苗 气候 暴雨 洪水 干旱 丰收 农民 博物馆 艺术家 音乐 电影 足球 比赛 球队 天气`)

// Run runs the bulkload tool with args (its flags and arguments, without the
// command name).
func Run(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("bulkload", flag.ContinueOnError)
	n := fs.Int("n", 1000000, "records")
	kind := fs.String("kind", "fp", "fp (precomputed fingerprints) or docs (JSON text documents)")
	seed := fs.Uint64("seed", 1, "random seed")
	dupEvery := fs.Int("dup-every", 50, "every N-th record is a near-copy of an earlier one (0: none)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	r := rand.New(rand.NewPCG(*seed, 42))
	w := bufio.NewWriterSize(os.Stdout, 1<<20)
	defer w.Flush()
	const t0 = 1700000000
	var recent []uint64
	var recentDocs []string
	for i := range *n {
		at := t0 + int64(r.IntN(365*86400))
		switch *kind {
		case "fp":
			fp := r.Uint64()
			if *dupEvery > 0 && i%*dupEvery == 1 && len(recent) > 0 {
				fp = recent[r.IntN(len(recent))] ^ 1<<r.IntN(64)
			}
			if len(recent) < 4096 {
				recent = append(recent, fp)
			} else {
				recent[r.IntN(len(recent))] = fp
			}
			fmt.Fprintf(w, "d%d,%016x,%d\n", i, fp, at)
		case "docs":
			var text string
			if *dupEvery > 0 && i%*dupEvery == 1 && len(recentDocs) > 0 {
				text = recentDocs[r.IntN(len(recentDocs))] + " update"
			} else {
				text = randomText(r, i%2 == 0)
			}
			if len(recentDocs) < 256 {
				recentDocs = append(recentDocs, text)
			} else {
				recentDocs[r.IntN(len(recentDocs))] = text
			}
			b, _ := json.Marshal(map[string]any{"id": fmt.Sprintf("d%d", i), "title": text[:min(len(text), 30)], "text": text, "time": at})
			w.Write(b)
			w.WriteByte('\n')
		default:
			return fmt.Errorf("unknown -kind %q", *kind)
		}
	}
	return nil
}

// randomText is about 1 KB of English words or Chinese words.
func randomText(r *rand.Rand, chinese bool) string {
	var b strings.Builder
	for b.Len() < 1000 {
		if chinese {
			b.WriteString(zh[r.IntN(len(zh))])
			if r.IntN(8) == 0 {
				b.WriteString("。")
			}
		} else {
			b.WriteString(en[r.IntN(len(en))])
			b.WriteByte(' ')
		}
	}
	return b.String()
}
