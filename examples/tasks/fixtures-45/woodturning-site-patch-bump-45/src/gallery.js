// gallery lightbox
import PhotoSwipeLightbox from 'photoswipe/lightbox';
const lightbox = new PhotoSwipeLightbox({ gallery: '#bowls', children: 'a' });
lightbox.init();
