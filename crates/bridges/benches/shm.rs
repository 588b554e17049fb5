//! Benchmark (not a test): 1920 x 1080 RGB frames through a shared-memory segment, end to end:
//! a writer thread writes frames back to back (its rate), then paced at 250 frames/s while a
//! reader thread takes every whole frame it can (frames delivered a second); against a plain
//! copy of the same bytes in memory in the same run.

use bridges::shm::{Element, Kind, Layout, Meta, Segment};
use std::time::Instant;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (w, h) = (1920usize, 1080usize);
    let bytes = w * h * 3;
    let frames = 600u64;
    let dir = bridges::shm::default_dir();
    let dir = if dir.is_dir() { dir } else { std::env::temp_dir() };
    let name = format!("roadscan-bench-{}", std::process::id());
    let mut seg = Segment::create(&dir, &name, Kind::Image, bytes)?;
    let path = seg.path().to_path_buf();
    // Baseline: copying a frame in memory.
    let src = vec![7u8; bytes];
    let mut dst = vec![0u8; bytes];
    let t = Instant::now();
    for i in 0..frames {
        dst.copy_from_slice(&src);
        dst[0] = i as u8;
    }
    let copy_fps = frames as f64 / t.elapsed().as_secs_f64();
    std::hint::black_box(&dst);
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let stop = done.clone();
    let reader = std::thread::spawn(move || -> Result<(u64, u64), String> {
        let r = Segment::open(&path).map_err(|e| e.to_string())?;
        let (mut read, mut last) = (0u64, 0u64);
        while !stop.load(std::sync::atomic::Ordering::Relaxed) {
            if let Some(s) = r.read(1 << 20).map_err(|e| e.to_string())? {
                if s.tick != last {
                    read += 1;
                    last = s.tick;
                }
            }
        }
        Ok((read, last))
    });
    let mut frame = vec![0u8; bytes];
    let meta = |tick: u64| Meta {
        tick,
        time: tick as f64 / 250.0,
        element: Element::U8,
        layout: Layout::ColumnMajor,
        shape: [h as u32, w as u32, 3, 1],
    };
    let t = Instant::now();
    for tick in 1..=frames {
        frame[0] = tick as u8;
        seg.write(&meta(tick), &frame)?;
    }
    let wall = t.elapsed().as_secs_f64();
    // Paced: a frame every 4 ms for 2 s, numbered on from the back-to-back ones.
    let t = Instant::now();
    let paced = 500u64;
    for k in 1..=paced {
        let due = std::time::Duration::from_secs_f64(k as f64 / 250.0);
        if let Some(wait) = due.checked_sub(t.elapsed()) {
            std::thread::sleep(wait);
        }
        frame[0] = k as u8;
        seg.write(&meta(frames + k), &frame)?;
    }
    let paced_wall = t.elapsed().as_secs_f64();
    // Let the reader take the last frame.
    std::thread::sleep(std::time::Duration::from_millis(50));
    done.store(true, std::sync::atomic::Ordering::Relaxed);
    let (read, last) = reader.join().map_err(|_| "reader panicked")??;
    seg.remove()?;
    println!(
        "shm 1920x1080 RGB: back to back {:.0} frames/s written (in-memory copy {copy_fps:.0} frames/s, ratio {:.2}); paced at 250 frames/s: {paced} written in {paced_wall:.2} s, the reader took {read} distinct whole frames (last {last}), {:.0} frames/s delivered",
        frames as f64 / wall,
        (frames as f64 / wall) / copy_fps,
        read as f64 / paced_wall
    );
    Ok(())
}
