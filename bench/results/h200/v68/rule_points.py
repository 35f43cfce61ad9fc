#!/usr/bin/env python3
"""v68: the GEMV points whose gate-up split the new rules change (split_two_from_k: FP8 3584,
dense 2048), with the sweep's times (call1/sweep_*.txt, H100) of the old and the new split at
the rule's down split. A replica of choose_small_m_config for one token tile (planner.cpp), H100
/ H200 132 SMs, the fp8_gemv and dense rules of planner.h; the grouped-path points show ~1.00.

  rule_points.py
"""
import json,re
import os, sys
here=os.path.dirname(os.path.abspath(__file__))
d=json.load(open(os.path.join(here,'../../../../shapes/models.json')))['bench_shapes']
W=os.path.join(here,'call1/')
def read(p):
    pts={}
    for line in open(p):
        f=line.split()
        if len(f)>=4 and f[1].isdigit() and re.match(r'^\d+(\.\d+)?$',f[3]): pts[(f[0],int(f[1]))]=float(f[3])
    return pts
def choose(tiles,ma,pairs,k,sms,unit,rule,floor=0):
    res1,res4,maxun=rule
    nt=4 if ma>0 and pairs>12*ma else 1
    resident=res1 if nt==1 else res4; wave=resident*sms
    unsplit=-(-tiles//8)*ma
    one_wave=resident>0 and unsplit<=maxun*sms
    c=1; split=1
    while split<=8:
        if split>1 and k<unit*split: break
        rt=8//split; ctas=-(-tiles//rt)*ma
        if one_wave and split>1 and ctas>wave: break
        c=split
        if not one_wave and ctas>=8*sms: break
        split*=2
    if nt==1 and c<2 and floor and k>=floor and k>=unit*2: c=2
    return c
for pr,rule,floor in (('fp8_channel',(2,2,7),3584),('bf16',(2,0,1),2048)):
    auto=read(W+f'sweep_{pr}_auto.txt')
    grid={(g,dd):read(W+f'sweep_{pr}_{g}_{dd}.txt') for g in (1,2,4,8) for dd in (1,2,4,8)}
    for name,s in d.items():
        H,I,E,k=s['H'],s['I'],s['E'],s['topk']
        for m in (1,2,4,8,16,32):
            pairs=m*k; ma=min(E,pairs)
            g0=choose(-(-I//8),ma,pairs,H,132,128,rule); g1=choose(-(-I//8),ma,pairs,H,132,128,rule,floor)
            dn=choose(-(-H//16),ma,pairs,I,132,128,rule)
            if g0!=g1:
                key=(name,m)
                a=auto.get(key); old=grid[(g0,dn)].get(key); new=grid[(g1,dn)].get(key)
                print(pr,name[:14],m,'G %d->%d D %d'%(g0,g1,dn),'auto %.1f'%a if a else '-', 'forced old %.1f new %.1f ratio %.3f'%(old,new,new/old) if old and new else '-')
